//! `--config FILE`: a tier's flags from a YAML (or JSON) file, a mapping of
//! flag names (without the dashes) to values: a scalar, or a list for flags
//! that take several. Flags given on the command line win over the file's;
//! a key that is not a flag of the tier is an error, as an unknown flag is.
//!
//! ```yaml
//! secure-port: 6444
//! etcd-servers: [https://10.0.0.1:2379, https://10.0.0.2:2379]
//! audit-policy-file: /etc/kubernetes/audit-policy.yaml
//! v: 2
//! ```

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::Path;

use anyhow::{bail, Context};
use serde_json::Value;

/// The flag `--config` names.
const CONFIG_FLAG: &str = "config";

/// The command line with the flags of its `--config` file put first (those
/// the command line sets itself are left out), for `clap`'s `parse_from`.
pub fn expand(args: impl IntoIterator<Item = OsString>) -> anyhow::Result<Vec<OsString>> {
    let args: Vec<OsString> = args.into_iter().collect();
    let mut file = None;
    let mut given = BTreeSet::new();
    let mut i = 1;
    while i < args.len() {
        let a = args[i].to_string_lossy().into_owned();
        if let Some(flag) = a.strip_prefix("--").or_else(|| a.strip_prefix('-')) {
            let (name, inline) = match flag.split_once('=') {
                Some((n, v)) => (n.to_string(), Some(v.to_string())),
                None => (flag.to_string(), None),
            };
            if name == CONFIG_FLAG {
                match inline {
                    Some(v) => file = Some(v),
                    None => {
                        file = args.get(i + 1).map(|v| v.to_string_lossy().into_owned());
                        i += 1;
                    }
                }
            }
            given.insert(name);
        }
        i += 1;
    }
    let Some(file) = file else {
        return Ok(args);
    };
    let mut out = vec![args.first().cloned().unwrap_or_default()];
    out.extend(flags_of(Path::new(&file), &given)?);
    out.extend(args.into_iter().skip(1));
    Ok(out)
}

/// The `--name=value` arguments of a config file, without those in `skip`.
fn flags_of(path: &Path, skip: &BTreeSet<String>) -> anyhow::Result<Vec<OsString>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading --config {}", path.display()))?;
    let doc: Value = serde_saphyr::from_str(&text)
        .with_context(|| format!("parsing --config {}", path.display()))?;
    let Value::Object(map) = doc else {
        bail!(
            "--config {}: not a mapping of flag names to values",
            path.display()
        );
    };
    let mut out = Vec::new();
    for (name, value) in map {
        if name == CONFIG_FLAG {
            bail!(
                "--config {}: a config file cannot name another",
                path.display()
            );
        }
        if skip.contains(&name) {
            continue;
        }
        let scalar = |v: &Value| -> anyhow::Result<String> {
            Ok(match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => bail!(
                    "--config {}: {name}: expected a scalar or a list of scalars",
                    path.display()
                ),
            })
        };
        let values = match &value {
            Value::Array(items) => items
                .iter()
                .map(scalar)
                .collect::<anyhow::Result<Vec<_>>>()?,
            v => vec![scalar(v)?],
        };
        for v in values {
            let dashes = if name.len() == 1 { "-" } else { "--" };
            out.push(OsString::from(format!("{dashes}{name}={v}")));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn file_flags_come_first_and_the_command_line_wins() {
        let dir = std::env::temp_dir().join(format!("config-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("kube-core.yaml");
        std::fs::write(
            &file,
            "secure-port: 7000\netcd-servers: [https://a:2379, https://b:2379]\nv: 2\nanonymous-auth: false\n",
        )
        .unwrap();
        let got = expand(os(&[
            "bin",
            "--config",
            file.to_str().unwrap(),
            "--secure-port=7001",
        ]))
        .unwrap();
        let got: Vec<String> = got
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(got[0], "bin");
        assert!(got.contains(&"--etcd-servers=https://a:2379".to_string()));
        assert!(got.contains(&"--etcd-servers=https://b:2379".to_string()));
        assert!(got.contains(&"-v=2".to_string()));
        assert!(got.contains(&"--anonymous-auth=false".to_string()));
        assert!(
            !got.contains(&"--secure-port=7000".to_string()),
            "the command line wins: {got:?}"
        );
        assert_eq!(got.last().map(String::as_str), Some("--secure-port=7001"));
        assert_eq!(
            expand(os(&["bin", "--v=1"])).unwrap(),
            os(&["bin", "--v=1"])
        );
        std::fs::write(&file, "- not a mapping\n").unwrap();
        assert!(expand(os(&["bin", &format!("--config={}", file.display())])).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
