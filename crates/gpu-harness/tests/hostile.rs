//! Hostile and careless fixtures through the whole oracle: kernels that write
//! files, spawn processes, open sockets, read `/etc`, `include_str!` a file
//! outside the fixture or read `env!`; manifests that inject code or ask for
//! absurd buffers. Each test shows that nothing is written, reached or left
//! running, and that every fixture gets a verdict. Each effect test runs the
//! same fixture once more with the sandbox switched off (`--unsandboxed`),
//! where the effect does happen: the assertion can fail.
//!
//! Without bubblewrap these tests print NOT RUN, unless `REQUIRE_SANDBOX=1`
//! (set by `ci/test.sh`), where a missing sandbox fails.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gpu_harness::pipeline::Options;
use gpu_harness::report::{FailureKind, FixtureReport, StageStatus, Verdict};
use gpu_harness::run::{run_all, run_isolated};
use sandbox::Sandbox;

fn confined() -> Option<Sandbox> {
    sandbox::testing::confined_or_not_run()
}

fn opts(sandbox: Sandbox) -> Options {
    Options {
        require_libnvvm: nvvm_emit::testing::libnvvm_required(),
        sandbox: Ok(sandbox),
        ..Options::default()
    }
}

fn unsandboxed() -> Options {
    opts(Sandbox::unconfined().expect("a toolchain"))
}

/// A scratch folder for this test, fresh.
fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hostile-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch");
    d
}

/// Writes a fixture folder `name` under `root`.
fn fixture(root: &Path, name: &str, kernel: &str, manifest: &str) -> PathBuf {
    let d = root.join(name);
    std::fs::create_dir_all(&d).expect("dir");
    std::fs::write(d.join("kernel.rs"), kernel).expect("kernel");
    std::fs::write(d.join("manifest.toml"), manifest).expect("manifest");
    d
}

/// A kernel writing `tid` to `out[tid]`, with `host_effect` run first on the
/// host side only (behind `cfg(not(gpu_device))`, as the issue found it).
fn kernel_with_host_effect(host_effect: &str) -> String {
    format!(
        "use crate::gpu::*;\n\
         #[unsafe(no_mangle)]\n\
         pub extern \"C\" fn k(out: DisjointSlice<u32>) {{\n\
         \x20   #[cfg(not(gpu_device))]\n\
         \x20   {{ {host_effect} }}\n\
         \x20   let i = global_idx_x() as usize;\n\
         \x20   if i < out.len() {{ out.set(i, i as u32); }}\n\
         }}\n"
    )
}

const SMALL: &str = "[[buffer]]\nname = \"out\"\nty = \"u32\"\nlen = 4\nreadback = 4\n\n\
                     [[launch]]\nkernel = \"k\"\ngrid = [1, 1]\nblock = [4, 1]\n\
                     args = [{ buffer = \"out\" }]\n";

fn stage<'a>(r: &'a FixtureReport, name: &str) -> &'a gpu_harness::report::Stage {
    r.stage(name)
        .unwrap_or_else(|| panic!("{}: no stage {name}: {:?}", r.name, r.stages))
}

#[test]
fn a_kernel_writing_a_file_writes_nothing() {
    let Some(sb) = confined() else { return };
    let root = scratch("write");
    let victim = root.join("pwned");
    let effect = format!(
        "let _ = std::fs::write({:?}, b\"x\"); let _ = std::fs::write(\"/src/pwned\", b\"x\");",
        victim.display().to_string()
    );
    let dir = fixture(
        &root,
        "writes_file",
        &kernel_with_host_effect(&effect),
        SMALL,
    );
    let r = run_isolated(&dir, &opts(sb));
    assert_eq!(r.verdict, Verdict::Pass, "{r:?}");
    assert!(
        !victim.exists(),
        "the confined kernel wrote {}",
        victim.display()
    );
    assert!(
        !dir.join("pwned").exists(),
        "the confined kernel wrote into its fixture"
    );
    // Switched off, the same kernel writes the file.
    let r = run_isolated(&dir, &unsandboxed());
    assert_eq!(r.verdict, Verdict::Pass, "{r:?}");
    assert!(
        victim.exists(),
        "the unsandboxed run should have written the file"
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_kernel_spawning_a_process_leaves_nothing_running() {
    let Some(sb) = confined() else { return };
    let root = scratch("spawn");
    let token = format!("hostile-sleeper-{}", std::process::id());
    // A detached grandchild that would outlive the host program.
    let effect = format!(
        "let _ = std::process::Command::new(\"/bin/bash\").args([\"-c\", \"(exec -a {token} sleep 300) &\"]).status();"
    );
    let dir = fixture(&root, "spawns", &kernel_with_host_effect(&effect), SMALL);
    let running = || {
        std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
            .filter(|c| String::from_utf8_lossy(c).contains(&token))
            .count()
    };
    let start = Instant::now();
    let r = run_isolated(&dir, &opts(sb));
    assert_eq!(r.verdict, Verdict::Pass, "{r:?}");
    assert!(start.elapsed() < Duration::from_secs(120));
    assert_eq!(
        running(),
        0,
        "a process of the confined kernel outlived the run"
    );
    let r = run_isolated(&dir, &unsandboxed());
    assert_eq!(r.verdict, Verdict::Pass, "{r:?}");
    assert!(
        running() > 0,
        "the unsandboxed run should have left its sleeper"
    );
    let _ = std::process::Command::new("pkill")
        .args(["-f", &token])
        .status();
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_kernel_opening_a_socket_reaches_nothing() {
    let Some(sb) = confined() else { return };
    let root = scratch("socket");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    listener.set_nonblocking(true).expect("nonblocking");
    let effect = format!("let _ = std::net::TcpStream::connect((\"127.0.0.1\", {port}));");
    let dir = fixture(&root, "socket", &kernel_with_host_effect(&effect), SMALL);
    let r = run_isolated(&dir, &opts(sb));
    assert_eq!(r.verdict, Verdict::Pass, "{r:?}");
    assert!(
        listener.accept().is_err(),
        "the confined kernel reached the host's loopback"
    );
    let r = run_isolated(&dir, &unsandboxed());
    assert_eq!(r.verdict, Verdict::Pass, "{r:?}");
    assert!(
        listener.accept().is_ok(),
        "the unsandboxed kernel should have connected"
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_kernel_reading_etc_finds_nothing() {
    let Some(sb) = confined() else { return };
    let root = scratch("etc");
    let effect =
        "if std::fs::read(\"/etc/os-release\").is_ok() { panic!(\"read /etc/os-release\") }";
    let dir = fixture(&root, "reads_etc", &kernel_with_host_effect(effect), SMALL);
    let r = run_isolated(&dir, &opts(sb));
    assert_eq!(r.verdict, Verdict::Pass, "{r:?}");
    let r = run_isolated(&dir, &unsandboxed());
    assert_eq!(r.verdict, Verdict::Fail);
    assert!(
        stage(&r, "host").detail.contains("read /etc/os-release"),
        "{r:?}"
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn include_str_of_a_file_outside_the_fixture_leaks_nothing() {
    let Some(sb) = confined() else { return };
    let root = scratch("include");
    let os_release = std::fs::read_to_string("/etc/os-release").unwrap_or_default();
    let secret_line = os_release
        .lines()
        .find(|l| l.starts_with("PRETTY_NAME="))
        .unwrap_or("PRETTY_NAME=")
        .to_string();
    let kernel = "use crate::gpu::*;\n\
                  const LEAK: &str = include_str!(\"/etc/os-release\");\n\
                  #[unsafe(no_mangle)]\n\
                  pub extern \"C\" fn k(out: DisjointSlice<u32>) {\n\
                  \x20   let i = global_idx_x() as usize;\n\
                  \x20   if i < out.len() { out.set(i, LEAK.len() as u32); }\n\
                  }\n";
    let dir = fixture(&root, "include_str", kernel, SMALL);
    let r = run_isolated(&dir, &opts(sb));
    let json = serde_json::to_string(&r).expect("json");
    assert_eq!(r.verdict, Verdict::Fail);
    assert_eq!(stage(&r, "import").status, StageStatus::Failed);
    assert!(stage(&r, "import").detail.contains("os-release"), "{r:?}");
    assert!(
        !json.contains(&secret_line),
        "the report leaks {secret_line}"
    );
    // Switched off, rustc reads the file and the kernel runs with it.
    let r = run_isolated(&dir, &unsandboxed());
    assert_eq!(stage(&r, "import").status, StageStatus::Ok, "{r:?}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn env_is_empty_at_compile_time() {
    let Some(sb) = confined() else { return };
    let root = scratch("env");
    let kernel = "use crate::gpu::*;\n\
                  const P: &str = env!(\"PATH\");\n\
                  #[unsafe(no_mangle)]\n\
                  pub extern \"C\" fn k(out: DisjointSlice<u32>) {\n\
                  \x20   let i = global_idx_x() as usize;\n\
                  \x20   if i < out.len() { out.set(i, P.len() as u32); }\n\
                  }\n";
    let dir = fixture(&root, "env_path", kernel, SMALL);
    let r = run_isolated(&dir, &opts(sb));
    assert_eq!(r.verdict, Verdict::Fail);
    let detail = &stage(&r, "import").detail;
    assert!(detail.contains("PATH"), "{detail}");
    let path = std::env::var("PATH").unwrap_or_default();
    assert!(
        path.is_empty() || !serde_json::to_string(&r).expect("json").contains(&path),
        "the report leaks PATH"
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn an_injected_buffer_name_is_refused_and_never_reaches_code() {
    let root = scratch("inject");
    let victim = root.join("injected");
    let evil = format!(
        "y: Vec<f32> = {{ std::fs::write({:?}, b\"x\").ok(); vec![] }}; let mut b_z",
        victim.display().to_string()
    );
    let manifest = SMALL.replace("\"out\"", &format!("{evil:?}"));
    let dir = fixture(&root, "injects", &kernel_with_host_effect(""), &manifest);
    let r = run_isolated(&dir, &Options::default());
    assert_eq!(r.verdict, Verdict::Fail);
    assert!(
        stage(&r, "manifest").detail.contains("not an identifier"),
        "{r:?}"
    );
    assert!(!victim.exists());
    // Even past the validation, the generated program never holds the name.
    let mut f = gpu_harness::fixture::Fixture::load(&fixture(
        &root,
        "plain",
        &kernel_with_host_effect(""),
        SMALL,
    ))
    .expect("loads");
    f.manifest.buffer[0].name = evil.clone();
    f.manifest.launch[0].args[0].buffer = Some(evil.clone());
    let disjoint = mir_import::model::Path {
        segments: mir_import::prelude::DISJOINT_SLICE
            .split("::")
            .map(|n| mir_import::model::PathSegment {
                name: n.into(),
                args: Vec::new(),
            })
            .collect(),
    };
    let params = |_: &str| Some(vec![mir_import::model::Ty::Adt(disjoint.clone())]);
    let src = gpu_harness::host::program(&f, Path::new("/p"), Path::new("/k"), &params)
        .expect("generates");
    assert!(!src.contains(&evil), "{src}");
    assert!(!src.contains("injected"), "{src}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn duplicate_buffer_names_are_refused() {
    let root = scratch("dup");
    let manifest = format!("{SMALL}\n[[buffer]]\nname = \"out\"\nty = \"u32\"\nlen = 4\n");
    let dir = fixture(&root, "dup", &kernel_with_host_effect(""), &manifest);
    let r = run_isolated(&dir, &Options::default());
    assert_eq!(r.verdict, Verdict::Fail);
    assert!(
        stage(&r, "manifest")
            .detail
            .contains("two buffers are named `out`"),
        "{r:?}"
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// A huge buffer, a fork bomb and an infinite loop beside the project's own
/// fixtures: every fixture gets a verdict, the normal ones pass, and the
/// 10^8-element buffer runs through quickly.
#[test]
fn careless_fixtures_beside_normal_ones_each_get_a_verdict() {
    let Some(sb) = confined() else { return };
    let root = scratch("careless");
    let huge = SMALL.replace("len = 4", "len = 1000000000000");
    fixture(&root, "huge_buffer", &kernel_with_host_effect(""), &huge);
    let big = SMALL.replace("len = 4", "len = 100000000");
    fixture(&root, "big_buffer", &kernel_with_host_effect(""), &big);
    let bomb = "let _ = std::process::Command::new(\"/bin/bash\").args([\"-c\", \"b() { b | b & }; b; sleep 600\"]).status();";
    let timed = format!("timeout_s = 5\n{SMALL}");
    fixture(&root, "fork_bomb", &kernel_with_host_effect(bomb), &timed);
    let looping = "use crate::gpu::*;\n\
                   #[unsafe(no_mangle)]\n\
                   pub extern \"C\" fn k(out: DisjointSlice<u32>) {\n\
                   \x20   let mut i = 0u32;\n\
                   \x20   while out.len() > 0 { i = i.wrapping_add(1); }\n\
                   \x20   out.set(0, i);\n\
                   }\n";
    fixture(
        &root,
        "infinite_loop",
        looping,
        &format!("step_limit = 100000\n{timed}"),
    );
    let mut dirs = gpu_harness::fixture::Fixture::discover(&root).expect("discover");
    let ours = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let normal: Vec<PathBuf> = ["saxpy", "shared_reduction", "atomic_flag"]
        .iter()
        .map(|n| ours.join(n))
        .collect();
    dirs.extend(normal.iter().cloned());
    let start = Instant::now();
    let report = run_all(&dirs, &opts(sb), 2, false);
    eprintln!("{}", report.table());
    assert_eq!(report.fixtures.len(), dirs.len(), "a fixture has no report");
    let by = |n: &str| {
        report
            .fixtures
            .iter()
            .find(|f| f.name == n)
            .unwrap_or_else(|| panic!("no report for {n}"))
    };
    for n in ["saxpy", "shared_reduction", "atomic_flag", "big_buffer"] {
        assert_eq!(by(n).verdict, Verdict::Pass, "{}", report.table());
    }
    assert!(
        stage(by("huge_buffer"), "manifest")
            .detail
            .contains("limit"),
        "{}",
        report.table()
    );
    let bomb = by("fork_bomb");
    assert_eq!(bomb.verdict, Verdict::Fail);
    assert!(stage(bomb, "host").detail.contains("timed out"), "{bomb:?}");
    let looped = by("infinite_loop");
    assert_eq!(looped.verdict, Verdict::Fail);
    assert!(
        stage(looped, "host").detail.contains("timed out"),
        "{looped:?}"
    );
    assert_eq!(stage(looped, "device").status, StageStatus::Failed);
    // Machines tell the failures apart by their kind, not their text.
    assert_eq!(stage(bomb, "host").kind, Some(FailureKind::HostTimeout));
    assert_eq!(stage(looped, "device").kind, Some(FailureKind::Device));
    assert_eq!(
        stage(by("huge_buffer"), "manifest").kind,
        Some(FailureKind::Manifest)
    );
    let json = serde_json::to_value(looped).expect("JSON");
    let host = json["stages"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["name"] == "host"))
        .expect("a host stage");
    assert_eq!(host["kind"], "host-timeout", "{host}");
    assert_eq!(host["status"], "failed", "{host}");
    let import = json["stages"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["name"] == "import"))
        .expect("an import stage");
    assert!(import.get("kind").is_none(), "{import}");
    assert!(
        start.elapsed() < Duration::from_secs(240),
        "{:?}",
        start.elapsed()
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// The 10^8-element buffer alone, timed: under a minute.
#[test]
fn a_hundred_million_element_buffer_runs_through_in_under_a_minute() {
    let Some(sb) = confined() else { return };
    let root = scratch("big");
    let big = SMALL.replace("len = 4", "len = 100000000");
    let dir = fixture(&root, "big_buffer", &kernel_with_host_effect(""), &big);
    let start = Instant::now();
    let r = run_isolated(&dir, &opts(sb));
    let took = start.elapsed();
    assert_eq!(r.verdict, Verdict::Pass, "{r:?}");
    eprintln!("10^8 elements: {took:?}");
    assert!(took < Duration::from_secs(60), "{took:?}");
    let _ = std::fs::remove_dir_all(&root);
}

/// One buffer as a kernel's `&[u32]` and as its `DisjointSlice` in one
/// launch: Rust forbids the aliasing and the device code is compiled
/// assuming it away (`noalias readonly`), so the fixture is refused with
/// both arguments named, before anything runs.
#[test]
fn a_buffer_passed_as_shared_and_writable_is_refused() {
    let root = scratch("alias");
    let kernel = "use crate::gpu::*;\n\
                  #[unsafe(no_mangle)]\n\
                  pub extern \"C\" fn k(input: &[u32], out: DisjointSlice<u32>) {\n\
                  \x20   let i = thread_idx_x() as usize;\n\
                  \x20   if i < input.len() && i < out.len() { out.set(i, input[i] + 1); }\n\
                  }\n";
    let manifest = SMALL.replace(
        "args = [{ buffer = \"out\" }]",
        "args = [{ buffer = \"out\" }, { buffer = \"out\" }]",
    );
    let dir = fixture(&root, "alias", kernel, &manifest);
    let r = run_isolated(&dir, &unsandboxed());
    assert_eq!(r.verdict, Verdict::Fail);
    let detail: String = r.stages.iter().map(|s| s.detail.clone()).collect();
    assert!(
        detail.contains(
            "buffer `out` is passed as a shared reference (argument 0) and as a `DisjointSlice` (argument 1)"
        ),
        "{r:?}"
    );
    let _ = std::fs::remove_dir_all(&root);
}
