//! The test oracle: fixture manifests, the pipeline driver, code-shape checks, the virtual device, the CUDA backend, parallel runs and reports, and the `gpu-harness` CLI.
