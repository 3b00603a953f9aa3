//! W3C Trace Context: `traceparent: 00-<32 hex trace id>-<16 hex span id>-<2 hex flags>`.

/// The identity of a span and whether its trace is sampled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpanContext {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    pub sampled: bool,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex<const N: usize>(s: &str) -> Option<[u8; N]> {
    if s.len() != N * 2 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let mut out = [0u8; N];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

impl SpanContext {
    /// Parses a `traceparent` header; `None` for anything malformed (all-zero
    /// IDs included), which starts a new trace, as the specification says.
    pub fn from_traceparent(value: &str) -> Option<SpanContext> {
        let mut parts = value.trim().split('-');
        let version = parts.next()?;
        let trace_id = unhex::<16>(parts.next()?)?;
        let span_id = unhex::<8>(parts.next()?)?;
        let flags = unhex::<1>(parts.next()?)?;
        if version.len() != 2 || version == "ff" || (version == "00" && parts.next().is_some()) {
            return None;
        }
        if trace_id == [0; 16] || span_id == [0; 8] {
            return None;
        }
        Some(SpanContext {
            trace_id,
            span_id,
            sampled: flags[0] & 1 == 1,
        })
    }

    /// A child of `parent` (same trace), or the root of a new trace.
    pub fn child_of(parent: Option<&SpanContext>, sampled: bool) -> SpanContext {
        let mut span_id = rand::random::<[u8; 8]>();
        if span_id == [0; 8] {
            span_id[7] = 1;
        }
        let trace_id = match parent {
            Some(p) => p.trace_id,
            None => {
                let mut t = rand::random::<[u8; 16]>();
                if t == [0; 16] {
                    t[15] = 1;
                }
                t
            }
        };
        SpanContext {
            trace_id,
            span_id,
            sampled,
        }
    }

    /// The `traceparent` header naming this span as the parent.
    pub fn traceparent(&self) -> String {
        format!(
            "00-{}-{}-{}",
            hex(&self.trace_id),
            hex(&self.span_id),
            if self.sampled { "01" } else { "00" }
        )
    }

    /// The trace ID in hex.
    pub fn trace_id_hex(&self) -> String {
        hex(&self.trace_id)
    }

    /// The span ID in hex.
    pub fn span_id_hex(&self) -> String {
        hex(&self.span_id)
    }
}

/// A span ID in hex.
pub fn span_id_hex(id: &[u8; 8]) -> String {
    hex(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparent_round_trips_and_malformed_ones_start_a_new_trace() {
        let v = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let c = SpanContext::from_traceparent(v).unwrap();
        assert!(c.sampled);
        assert_eq!(c.traceparent(), v);
        let child = SpanContext::child_of(Some(&c), true);
        assert_eq!(child.trace_id, c.trace_id);
        assert_ne!(child.span_id, c.span_id);
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
        ] {
            assert!(SpanContext::from_traceparent(bad).is_none(), "{bad}");
        }
        assert!(
            !SpanContext::from_traceparent(
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"
            )
            .unwrap()
            .sampled
        );
    }
}
