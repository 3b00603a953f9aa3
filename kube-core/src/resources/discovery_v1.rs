//! `discovery.k8s.io/v1`: EndpointSlices, on the generic store. The
//! aggregator reads them to route to external API servers.

use apiserver::registry::resource::ResourceDef;
use apiserver::registry::table::Column;
use k8s_openapi::api::discovery::v1;
use serde_json::{json, Value};

use super::kind;

/// discovery.k8s.io/v1 declarations.
pub fn definitions() -> Vec<ResourceDef> {
    vec![kind::<v1::EndpointSlice>()
        .storage_path("endpointslices")
        .columns(vec![
            Column::path("AddressType", "addressType"),
            Column::func("Ports", "string", ports_column),
            Column::func("Endpoints", "string", endpoints_column),
            Column::age(),
        ])]
}

fn ports_column(obj: &Value) -> Value {
    let ports: Vec<String> = obj
        .get("ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| p.get("port").and_then(Value::as_i64))
        .map(|p| p.to_string())
        .collect();
    if ports.is_empty() {
        json!("<unset>")
    } else {
        json!(ports.join(","))
    }
}

/// Up to three addresses then `+ N more...`, as kubectl's printer.
fn endpoints_column(obj: &Value) -> Value {
    let addrs: Vec<&str> = obj
        .get("endpoints")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|e| {
            e.get("addresses")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
        })
        .collect();
    if addrs.is_empty() {
        return json!("<unset>");
    }
    let shown = addrs[..addrs.len().min(3)].join(",");
    if addrs.len() > 3 {
        json!(format!("{shown} + {} more...", addrs.len() - 3))
    } else {
        json!(shown)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_summarise_ports_and_addresses() {
        let obj = json!({"ports": [{"port": 443}, {"port": 80}], "endpoints": [
            {"addresses": ["10.0.0.1", "10.0.0.2"]}, {"addresses": ["10.0.0.3", "10.0.0.4"]}]});
        assert_eq!(ports_column(&obj), json!("443,80"));
        assert_eq!(
            endpoints_column(&obj),
            json!("10.0.0.1,10.0.0.2,10.0.0.3 + 1 more...")
        );
        assert_eq!(endpoints_column(&json!({})), json!("<unset>"));
    }
}
