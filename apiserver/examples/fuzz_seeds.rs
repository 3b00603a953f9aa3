//! Writes each fuzz target's seeds (`apiserver::fuzzing::seeds`) into
//! `<dir>/<target>/seed-<n>`, the corpus layout libFuzzer starts from.
//! Usage: `cargo run -p kube-apiserver-lib --example fuzz_seeds -- fuzz/corpus`.

fn main() -> std::io::Result<()> {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "fuzz/corpus".to_string());
    for (name, _) in apiserver::fuzzing::TARGETS {
        let target_dir = std::path::Path::new(&dir).join(name);
        std::fs::create_dir_all(&target_dir)?;
        for (i, seed) in apiserver::fuzzing::seeds(name).iter().enumerate() {
            std::fs::write(target_dir.join(format!("seed-{i}")), seed)?;
        }
    }
    Ok(())
}
