//! NVRTC and `ptxas -v` on real compiles: a kernel that uses only NVRTC's
//! builtins compiles without any header, and ptxas's figures for it are read.

use nvrtc::stats::{FunctionKind, ptxas_stats_with};
use nvrtc::testing::{nvrtc_or_skip, ptxas_or_skip};
use nvrtc::{ARCH_OPTION, NvrtcError};

/// Every builtin the bench kernels use, and no `#include`: NVRTC's builtin
/// headers (in libnvrtc-builtins) must be enough.
const BUILTINS: &str = r#"
extern "C" __global__ void builtins(const unsigned* __restrict__ in, unsigned* out, unsigned n) {
    __shared__ unsigned s[256];
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = i < n ? in[i] : 0u;
    v += __shfl_down_sync(0xffffffffu, v, 16);
    s[threadIdx.x] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicAdd(&out[blockIdx.x % 4], s[0] + s[blockDim.x - 1]);
    }
}
"#;

#[test]
fn builtins_compile_without_headers() {
    let Some(nvrtc) = nvrtc_or_skip("builtins_compile_without_headers") else {
        return;
    };
    let ptx = nvrtc
        .compile(BUILTINS, "builtins.cu", &[ARCH_OPTION])
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(ptx.text.contains(".entry builtins("), "{}", ptx.text);
    assert!(ptx.text.contains(".target sm_90"), "{}", ptx.text);
    for op in ["bar.sync", "shfl.sync.down", "atom.global.add"] {
        assert!(ptx.text.contains(op), "no {op} in\n{}", ptx.text);
    }

    let Some(ptxas) = ptxas_or_skip("builtins_compile_without_headers") else {
        return;
    };
    let stats = ptxas_stats_with(ptxas, &ptx.text, "sm_90").unwrap_or_else(|e| panic!("{e}"));
    let k = stats.function("builtins").expect("the kernel's figures");
    assert_eq!(k.kind, Some(FunctionKind::Entry));
    assert!(k.registers > 0, "{k:?}");
    assert_eq!(k.smem, 1024, "256 u32 of shared memory: {k:?}");
    assert_eq!((k.spill_stores, k.spill_loads, k.lmem), (0, 0, 0), "{k:?}");
}

#[test]
fn a_local_array_shows_stack_and_the_compile_error_has_the_log() {
    let Some(nvrtc) = nvrtc_or_skip("a_local_array_shows_stack") else {
        return;
    };
    // A dynamically indexed local array cannot live in registers.
    let src = r#"
extern "C" __global__ void local_array(int* out, int k) {
    int a[256];
    for (int j = 0; j < 256; ++j) a[j] = j * out[j];
    out[threadIdx.x] = a[out[k] & 255];
}
"#;
    let ptx = nvrtc
        .compile(src, "local.cu", &[ARCH_OPTION])
        .unwrap_or_else(|e| panic!("{e}"));
    if let Some(ptxas) = ptxas_or_skip("a_local_array_shows_stack") {
        let stats = ptxas_stats_with(ptxas, &ptx.text, "sm_90").unwrap_or_else(|e| panic!("{e}"));
        let k = stats.function("local_array").expect("figures");
        assert_eq!(k.stack_frame, 1024, "{k:?}");
        assert_eq!(k.cumulative_stack, 1024, "{k:?}");
    }
    let e = nvrtc
        .compile(
            "extern \"C\" __global__ void k() { int x = ; }",
            "broken.cu",
            &[ARCH_OPTION],
        )
        .expect_err("broken source compiled");
    assert!(matches!(e, NvrtcError::Call { .. }), "{e}");
    assert!(e.log().contains("broken.cu"), "the log names the file: {e}");
    assert!(e.to_string().contains(e.log().trim_end()), "{e}");
}
