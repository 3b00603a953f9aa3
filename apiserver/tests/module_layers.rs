//! The library imports downward only: `tools/check-layers.py` (the layer
//! table and the rules are there, and in ARCHITECTURE.md) must find no
//! upward import and no cycle between the units of a layer.

use std::process::Command;

#[test]
fn the_library_imports_downward_only() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../tools/check-layers.py");
    let out = Command::new("python3")
        .arg(script)
        .output()
        .expect("python3 runs tools/check-layers.py");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "layer violations:\n{report}");
    assert!(report.contains(" 0 violations"), "{report}");
}
