//! Monomorphisation (`mir_import::mono`): each generic function of the
//! kernel that rustc leaves as a call gets one body per instance, compiled by
//! rustc from the generic item's own text; calls resolve to it by their
//! printed path with arguments; its spans are the generic item's lines; and
//! instances without end (polymorphic recursion) stop after a bounded number
//! of rounds, leaving the calls for the lowering to refuse.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use mir_import::model::InlineHint;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(name)
        .join("kernel.rs")
}

#[test]
fn every_instance_gets_a_noinline_body_that_its_calls_resolve_to() {
    let file = fixture("generic_helpers");
    let k = mir_import::import_file(&file, &Default::default()).unwrap();
    // Each call resolves to `kernel::__mono_<fn>__<args>_<hash>::<fn>`.
    let instances = [
        (
            "kernel::twice<kernel::AddN>",
            "__mono_twice__kernel_AddN_",
            "twice",
        ),
        (
            "kernel::twice<kernel::MulN>",
            "__mono_twice__kernel_MulN_",
            "twice",
        ),
        ("kernel::larger<u32>", "__mono_larger__u32_", "larger"),
        ("kernel::larger<f32>", "__mono_larger__f32_", "larger"),
        (
            "kernel::twice_then<kernel::AddN, kernel::MulN>",
            "__mono_twice_then__kernel_AddN__kernel_MulN_",
            "twice_then",
        ),
    ];
    let mut bodies = std::collections::BTreeMap::new();
    for (call, module, name) in instances {
        let body = k
            .call_aliases
            .get(call)
            .unwrap_or_else(|| panic!("{call}: no alias"));
        let rest = body
            .strip_prefix(&format!("kernel::{module}"))
            .unwrap_or_else(|| panic!("{body}"));
        assert!(
            rest.ends_with(&format!("::{name}")) && rest.len() == 8 + 2 + name.len(),
            "{body}"
        );
        assert!(k.fn_body(body).is_some(), "{body} has no body");
        let attrs = k
            .attrs
            .get(body)
            .unwrap_or_else(|| panic!("{body}: no attributes"));
        assert_eq!(
            attrs.inline,
            Some(InlineHint::Never),
            "{body} must stay noinline"
        );
        bodies.insert(call, body.clone());
    }
    // The generic bodies are no longer reached from the kernel.
    let reached = k.reachable_function_bodies();
    assert!(
        !reached.contains_key("kernel::twice"),
        "{:?}",
        reached.keys()
    );
    assert!(reached.contains_key(&bodies["kernel::twice_then<kernel::AddN, kernel::MulN>"]));
    // The instance's spans are the generic item's lines in kernel.rs.
    let source = std::fs::read_to_string(&file).unwrap();
    let twice_line = source
        .lines()
        .position(|l| l.starts_with("pub fn twice<"))
        .unwrap() as u32
        + 1;
    let body = &k.bodies[k.fn_body(&bodies["kernel::twice<kernel::AddN>"]).unwrap()];
    let lines: Vec<u32> = body
        .blocks
        .values()
        .flat_map(|bb| {
            bb.statements
                .iter()
                .map(|s| &s.source)
                .chain([&bb.terminator.source])
        })
        .flatten()
        .filter(|s| s.span.file == file.display().to_string())
        .map(|s| s.span.line)
        .collect();
    // Inlined code keeps its own lines (`AddN::apply`); none points past the
    // kernel's last line into the appended copy, and the instance's own
    // statements are on `twice`'s lines.
    let last = source.lines().count() as u32;
    assert!(
        lines.iter().all(|&l| l <= last),
        "spans {lines:?} past line {last}"
    );
    assert!(
        lines.iter().any(|&l| l > twice_line && l <= twice_line + 2),
        "no span on `twice`'s body (line {twice_line}): {lines:?}"
    );
}

#[test]
fn polymorphic_recursion_is_rustc_s_own_error() {
    // rustc refuses it itself, before any instance is written: the import
    // fails with rustc's message (the bounded rounds are a second guard).
    let dir = std::env::temp_dir().join(format!("mono-recursion-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("kernel.rs");
    std::fs::write(
        &file,
        "use crate::gpu::*;\n\
         #[inline(never)]\n\
         pub fn deep<T: Copy>(x: T, n: u32) -> u32 {\n\
             if n == 0 { 0 } else { deep((x, x), n - 1) + 1 }\n\
         }\n\
         #[unsafe(no_mangle)]\n\
         pub extern \"C\" fn k(out: DisjointSlice<u32>) {\n\
             let i = global_idx_x() as usize;\n\
             if i < out.len() { out.set(i, deep(1u8, 3)); }\n\
         }\n",
    )
    .unwrap();
    let e = mir_import::import_file(&file, &Default::default()).unwrap_err();
    assert!(e.to_string().contains("rustc") || matches!(e, mir_import::ImportError::Rustc(_)));
    let mir_import::ImportError::Rustc(r) = e else {
        panic!("not a rustc error: {e}");
    };
    assert!(format!("{r:?}").contains("recursion limit"), "{r:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
