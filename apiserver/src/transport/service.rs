//! Addresses of a Service's ready endpoints, read from its EndpointSlices
//! as upstream's endpoint resolver reads them (the aggregator for remote
//! APIServices, admission for webhook Services).

use serde_json::Value;

/// `host:port`, bracketing IPv6 addresses.
pub fn host_port(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// Ready addresses of the slices on the port named `port_name`.
pub fn ready_addresses(slices: &[Value], port_name: &str) -> Vec<String> {
    let mut out = Vec::new();
    for slice in slices {
        let port = slice
            .get("ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|p| p.get("name").and_then(Value::as_str).unwrap_or("") == port_name)
            .and_then(|p| p.get("port").and_then(Value::as_u64))
            .and_then(|p| u16::try_from(p).ok());
        let Some(port) = port else { continue };
        for ep in slice
            .get("endpoints")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let ready = ep.pointer("/conditions/ready").and_then(Value::as_bool) != Some(false);
            if !ready {
                continue;
            }
            for a in ep
                .get("addresses")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                out.push(host_port(a, port));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_ready_addresses_on_the_named_port() {
        let slices = vec![json!({
            "ports": [{"name": "https", "port": 4443}, {"name": "metrics", "port": 9000}],
            "endpoints": [
                {"addresses": ["10.0.0.1"], "conditions": {"ready": true}},
                {"addresses": ["10.0.0.2"], "conditions": {"ready": false}},
                {"addresses": ["fd00::3"]},
            ]
        })];
        assert_eq!(
            ready_addresses(&slices, "https"),
            vec!["10.0.0.1:4443", "[fd00::3]:4443"]
        );
        assert!(ready_addresses(&slices, "other").is_empty());
    }
}
