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

/// Imports `source` as the kernel file of a folder of its own.
fn import_source(source: &str) -> Result<mir_import::model::Crate, mir_import::ImportError> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kernel.rs");
    std::fs::write(&file, source).unwrap();
    mir_import::import_file(&file, &Default::default())
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
    let e = import_source(
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
    .unwrap_err();
    assert!(e.to_string().contains("rustc") || matches!(e, mir_import::ImportError::Rustc(_)));
    let mir_import::ImportError::Rustc(r) = e else {
        panic!("not a rustc error: {e}");
    };
    assert!(format!("{r:?}").contains("recursion limit"), "{r:?}");
}

/// The closure instances of `closure_instances`: one body per call, under a
/// name made of the closure's body path (not its span), noinline, with every
/// closure call a call of the closure's body and every drop gone; the
/// source instance of `apply_unary::<f32, F>` serves both closures.
#[test]
fn closure_arguments_get_one_instance_each_with_calls_of_the_closure_bodies() {
    use mir_import::model::{Callee, TerminatorKind};
    let file = fixture("closure_instances");
    let k = mir_import::import_file(&file, &Default::default()).unwrap();
    let mut instances: Vec<(&String, &String)> = k
        .call_aliases
        .iter()
        .filter(|(call, _)| call.contains("{closure@"))
        .collect();
    instances.sort();
    // apply ×3 (one from `compose`), apply_unary ×2, compose, fold_with ×2,
    // for_each_up_to, run_once ×3.
    assert_eq!(instances.len(), 12, "{instances:#?}");
    for (call, body) in &instances {
        assert!(
            body.starts_with("kernel::__mono_")
                && body.contains("_kernel_closure_instances_closure_"),
            "{call} -> {body}"
        );
        let id = k
            .fn_body(body)
            .unwrap_or_else(|| panic!("{body} has no body"));
        assert_eq!(
            k.attrs.get(*body).and_then(|a| a.inline),
            Some(InlineHint::Never),
            "{body} must stay noinline"
        );
        for bb in k.bodies[id].blocks.values() {
            match &bb.terminator.kind {
                TerminatorKind::Drop { .. } => panic!("{body} keeps a drop"),
                TerminatorKind::Call {
                    func: Callee::Item(p),
                    ..
                } => {
                    let to = p.to_string();
                    assert!(!to.contains(" as std::ops::Fn"), "{body} still calls {to}");
                }
                _ => {}
            }
        }
    }
    // Both `apply_unary` closures go through the one source copy that names
    // `T = f32` and keeps `F` generic.
    let unary: Vec<_> = instances
        .iter()
        .filter(|(c, _)| c.starts_with("kernel::apply_unary"))
        .collect();
    assert_eq!(unary.len(), 2);
    // The four-capture closure's offsets come from the probe's proxy
    // struct of its captures, in capture order; rustc puts the `u64` first.
    let proxies = k.closure_proxies();
    let (closure, _) = proxies
        .iter()
        .find(|(_, t)| t.to_string() == "self::ClosureProxy4<u64, u16, u32, u16>")
        .unwrap_or_else(|| panic!("{proxies:?}"));
    let evaluated = mir_import::import_and_evaluate(&file, &Default::default(), true).unwrap();
    let layout = evaluated.krate.layouts.get(closure).unwrap();
    let mir_import::layout::TypeShape::Struct { fields } = &layout.shape else {
        panic!("{layout:?}");
    };
    let offsets: Vec<u64> = fields.iter().map(|f| f.offset).collect();
    assert_eq!(offsets, [0, 12, 8, 14], "{closure}");
}

/// The fact [`mir_import::Crate::closure_proxies`] rests on, checked on
/// this machine's rustc: a closure's captures sit where the same types sit
/// in a generic tuple struct of them (the probe's `ClosureProxyN`), with the
/// same size and alignment (niches and mixed sizes included). A tuple of
/// them followed by `()` is not laid out so: `(u8, bool, u16)` captured
/// puts `bool` last, where only a struct moves the largest niche. A
/// program built here captures known bytes and finds them in the closure's
/// memory.
#[test]
fn closure_layouts_are_proxy_struct_layouts() {
    let dir = std::env::temp_dir().join(format!("closure-layout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("main.rs");
    std::fs::write(&src, CLOSURE_LAYOUT_PROGRAM).unwrap();
    let exe = dir.join("main");
    let built = std::process::Command::new("rustc")
        .args(["--edition", "2024", "-O", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let run = std::process::Command::new(&exe).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 13, "{out}");
    for l in lines {
        assert!(
            l.ends_with(" OK"),
            "closure and proxy struct layouts differ: {l}"
        );
    }
}

const CLOSURE_LAYOUT_PROGRAM: &str = r#"
use std::mem::{align_of, align_of_val, offset_of, size_of, size_of_val};
use std::num::{NonZeroU8, NonZeroU32};
fn bytes<T>(v: &T) -> Vec<u8> {
    // SAFETY: reads the value's own bytes; the captures below have no padding
    // between the bytes that are compared.
    unsafe { std::slice::from_raw_parts(v as *const T as *const u8, size_of_val(v)).to_vec() }
}
fn find(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len()).position(|w| w == needle).expect("capture bytes")
}
struct P1<A>(A);
struct P2<A, B>(A, B);
struct P3<A, B, C>(A, B, C);
struct P4<A, B, C, D>(A, B, C, D);
macro_rules! offsets {
    ($tup:ty; $($i:tt),+) => { [$(offset_of!($tup, $i)),+] };
}
macro_rules! proxy {
    ($a:ty, $b:ty) => { P2<$a, $b> };
    ($a:ty, $b:ty, $c:ty) => { P3<$a, $b, $c> };
    ($a:ty, $b:ty, $c:ty, $d:ty) => { P4<$a, $b, $c, $d> };
}
macro_rules! check {
    ($($n:ident : $t:ty = $v:expr => $i:tt),+) => {{
        $(let $n: $t = $v;)+
        let c = move || { $(let _ = &$n;)+ };
        let b = bytes(&c);
        type Tup = proxy!($($t),+);
        let found = [$(find(&b, &bytes(&$n))),+];
        let expect = offsets!(Tup; $($i),+);
        let ok = size_of_val(&c) == size_of::<Tup>()
            && align_of_val(&c) == align_of::<Tup>()
            && found == expect;
        println!("{} {:?} {:?} {}", stringify!($($t),+), found, expect, if ok { "OK" } else { "DIFF" });
        c();
    }};
}
fn main() {
    check!(a: u8 = 0x11 => 0, b: u32 = 0x2233_4455 => 1);
    // The largest niche moves to the end in a struct, not in a tuple.
    check!(a: u8 = 0x11 => 0, b: bool = true => 1, c: u16 = 0x3344 => 2);
    check!(a: u32 = 0x1122_3344 => 0, b: bool = true => 1, c: u8 = 0x55 => 2);
    check!(a: u32 = 0x1122_3344 => 0, b: u8 = 0x55 => 1, c: u64 = 0x6677_8899_aabb_ccdd => 2);
    check!(a: u16 = 0x1122 => 0, b: u64 = 0x3344_5566_7788_99aa => 1, c: u8 = 0xbb => 2, d: u32 = 0xccdd_eeff => 3);
    check!(a: u8 = 0x11 => 0, b: u16 = 0x2233 => 1, c: u8 = 0x44 => 2);
    check!(a: bool = true => 0, b: u32 = 0x2233_4455 => 1, c: char = 'Z' => 2);
    check!(a: u8 = 0x12 => 0, b: NonZeroU32 = NonZeroU32::new(0x2233_4455).unwrap() => 1);
    check!(a: u32 = 0x1212_1212 => 0, b: NonZeroU8 = NonZeroU8::new(0x77).unwrap() => 1, c: u16 = 0x9988 => 2);
    check!(a: u16 = 0xe1f2 => 0, b: u64 = 0x0102_0304_0506_0708 => 1, c: u32 = 0x1112_1314 => 2, d: u16 = 0x2122 => 3);
    // A closure capturing a closure: the inner one stands in as its own
    // tuple (`closure_proxy`), here between two numbers.
    {
        let (x, y): (u8, u32) = (0x5a, 0x1357_9bdf);
        let inner = move || { let _ = (&x, &y); };
        let (a, b): (u64, u16) = (0x0102_0304_0506_0708, 0xa1b2);
        let outer = move || { let _ = (&a, &inner, &b); };
        type In = P2<u8, u32>;
        type Tup = P3<u64, In, u16>;
        let o = bytes(&outer);
        let found = [find(&o, &bytes(&a)), find(&o, &bytes(&y)), find(&o, &bytes(&b))];
        let expect = [offset_of!(Tup, 0), offset_of!(Tup, 1) + offset_of!(In, 1), offset_of!(Tup, 2)];
        let ok = size_of_val(&outer) == size_of::<Tup>() && align_of_val(&outer) == align_of::<Tup>() && found == expect;
        println!("nested {found:?} {expect:?} {}", if ok { "OK" } else { "DIFF" });
        outer();
    }
    // A closure lists its captures in the order its body first names them,
    // not as they were declared (what `known_std_captures` reads off
    // `filter_fold`'s source): `b` first here, in a struct that keeps the
    // order of two like fields.
    {
        let a: u32 = 0x1111_1111;
        let b: u32 = 0x2222_2222;
        let c = move || { let _ = (&b, &a); };
        type Tup = P2<u32, u32>;
        let o = bytes(&c);
        let found = [find(&o, &bytes(&b)), find(&o, &bytes(&a))];
        let expect = [offset_of!(Tup, 0), offset_of!(Tup, 1)];
        let ok = size_of_val(&c) == size_of::<Tup>() && found == expect;
        println!("mention-order {found:?} {expect:?} {}", if ok { "OK" } else { "DIFF" });
        c();
    }
    // As `Enumerate`'s `enumerate(count, fold)`: the fold first, a closure
    // holding a closure that borrows (a pointer, with a niche), then a count.
    {
        let m: u32 = 7;
        let key = |v: u32| v % m;
        let fold = move |v: u32| key(v);
        let count: usize = 0x1111_2222_3333_4444;
        let outer = move |v: u32| fold(v) as usize + count;
        type Key = P1<&'static u32>;
        type Fold = P1<Key>;
        type Tup = P2<Fold, usize>;
        let o = bytes(&outer);
        let at = (&m as *const u32 as usize).to_ne_bytes();
        let found = [find(&o, &at), find(&o, &bytes(&count))];
        let expect = [offset_of!(Tup, 0), offset_of!(Tup, 1)];
        let ok = size_of_val(&outer) == size_of::<Tup>() && align_of_val(&outer) == align_of::<Tup>() && found == expect;
        println!("enumerate-like {found:?} {expect:?} {}", if ok { "OK" } else { "DIFF" });
        let _ = outer(3);
    }
}
"#;

/// A generic function taking a closure and a const parameter, called with
/// one closure at two values: two instances, each with its own body.
#[test]
fn calls_differing_only_in_a_const_argument_get_two_bodies() {
    let k = import_source(
        "use crate::gpu::*;\n\
         #[inline(never)]\n\
         fn apply<F: Fn(u32) -> u32, const N: u32>(f: F, x: u32) -> u32 {\n\
             f(x) + N\n\
         }\n\
         #[unsafe(no_mangle)]\n\
         pub extern \"C\" fn k(out: DisjointSlice<u32>) {\n\
             let f = |x: u32| x * 2;\n\
             let t = thread_idx_x() as usize;\n\
             if t < out.len() {\n\
                 out.set(t, apply::<_, 4>(f, t as u32) + apply::<_, 8>(f, t as u32));\n\
             }\n\
         }\n",
    )
    .unwrap();
    let bodies: std::collections::BTreeSet<&String> = k
        .call_aliases
        .iter()
        .filter(|(call, _)| call.starts_with("kernel::apply"))
        .map(|(_, body)| body)
        .collect();
    assert_eq!(bodies.len(), 2, "{:?}", k.call_aliases);
    for b in &bodies {
        assert!(k.fn_body(b).is_some(), "{b} has no body");
    }
}

/// A generic block with const parameters (`impl<const R: usize, const C:
/// usize> Mat<R, C>`): its generic body prints a repeat of a const
/// parameter's length (`[const 0f32; C]`), which the import parses (it was
/// a parse error that lost the whole kernel), and an `#[inline(never)]`
/// method's call gets an instance whose copy names `R` and `C` by const
/// items (it was refused: only type parameters were copied).
#[test]
fn a_const_generic_blocks_method_is_parsed_and_instantiated() {
    let k = import_source(
        "use crate::gpu::*;\n\
         #[derive(Clone, Copy)]\n\
         pub struct Mat<const R: usize, const C: usize> { m: [[f32; C]; R] }\n\
         impl<const R: usize, const C: usize> Mat<R, C> {\n\
             #[inline(never)]\n\
             fn zero() -> Self { Mat { m: [[0.0; C]; R] } }\n\
         }\n\
         #[unsafe(no_mangle)]\n\
         pub extern \"C\" fn k(out: DisjointSlice<f32>) {\n\
             let a = Mat::<2, 3>::zero();\n\
             out.set(0, a.m[1][2]);\n\
         }\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut counts = Vec::new();
    for (_, body) in k.bodies.iter() {
        for bb in body.blocks.values() {
            for st in &bb.statements {
                if let mir_import::model::StatementKind::Assign(
                    _,
                    mir_import::model::Rvalue::Repeat(_, n),
                ) = &st.kind
                {
                    counts.push(format!("{}: {n:?}", body.path));
                }
            }
        }
    }
    assert!(
        counts.iter().any(|c| c.contains("Unknown(\"C\")")),
        "the generic body's repeat: {counts:?}"
    );
    let instance = k
        .call_aliases
        .iter()
        .find(|(call, _)| call.contains("Mat<2, 3>::zero"));
    assert!(
        instance.is_some(),
        "no instance of `zero`: {:?}",
        k.call_aliases
    );
}
