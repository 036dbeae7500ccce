//! Fixtures: a folder with `kernel.rs` (real Rust using the device prelude) and
//! `manifest.toml` (what to launch, on which buffers, what to read back, which
//! shape checks apply, and for a negative fixture the rule it must break).
//!
//! ```toml
//! shape = ["no-helper-alloca", "constants-read-only", "stable-keys"]
//! # expect_error = "shared-pointer-in-constant"   (negative fixtures)
//!
//! [[buffer]]
//! name = "x"
//! ty = "f32"                                       # u8..u64, i8..i64, usize, isize, f32, f64
//! len = 256
//! init = { iota = { start = 0, step = 1 } }        # or { fill = 5 }; default zero
//! readback = 256                                   # values compared; default 0
//!
//! [[launch]]
//! kernel = "saxpy"
//! grid = [2, 1]                                    # or [x, y, z]; z defaults to 1
//! block = [128, 1]                                 # or [x, y, z]
//! args = [{ f32 = 2.0 }, { buffer = "x" }, { buffer = "y" }]
//!
//! [expected]                                       # optional second check
//! y = [1000.0, 1001.0]
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Element types of buffers and scalar arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum ElemTy {
    U8,
    U16,
    U32,
    U64,
    I8,
    I16,
    I32,
    I64,
    F32,
    F64,
    /// `usize` (64-bit on every target we run).
    Usize,
    /// `isize`.
    Isize,
    /// `bool`: scalar arguments only.
    Bool,
}

impl ElemTy {
    /// Size in bytes.
    pub fn size(self) -> usize {
        match self {
            ElemTy::U8 | ElemTy::I8 | ElemTy::Bool => 1,
            ElemTy::U16 | ElemTy::I16 => 2,
            ElemTy::U32 | ElemTy::I32 | ElemTy::F32 => 4,
            ElemTy::U64 | ElemTy::I64 | ElemTy::F64 | ElemTy::Usize | ElemTy::Isize => 8,
        }
    }

    /// The Rust name.
    pub fn rust(self) -> &'static str {
        match self {
            ElemTy::U8 => "u8",
            ElemTy::U16 => "u16",
            ElemTy::U32 => "u32",
            ElemTy::U64 => "u64",
            ElemTy::I8 => "i8",
            ElemTy::I16 => "i16",
            ElemTy::I32 => "i32",
            ElemTy::I64 => "i64",
            ElemTy::F32 => "f32",
            ElemTy::F64 => "f64",
            ElemTy::Usize => "usize",
            ElemTy::Isize => "isize",
            ElemTy::Bool => "bool",
        }
    }

    /// Whether it is a float.
    pub fn is_float(self) -> bool {
        matches!(self, ElemTy::F32 | ElemTy::F64)
    }

    /// The bit pattern of `n` in this type, zero-extended to 64 bits, or
    /// `None` where the type cannot hold `n` exactly: an integer out of
    /// range or with a fraction, a float integer beyond 2^53, `bool` other
    /// than 0 and 1. A negative integer for an unsigned type is its two's
    /// complement (`fill = -1` for `u64::MAX`, which TOML cannot write).
    pub fn exact_bits(self, n: Number) -> Option<u64> {
        let bits = 8 * self.size() as u32;
        let int = match (self, n) {
            (ElemTy::F32, Number::Float(v)) => return Some(u64::from((v as f32).to_bits())),
            (ElemTy::F64, Number::Float(v)) => return Some(v.to_bits()),
            (ElemTy::F32 | ElemTy::F64, Number::Int(i)) => {
                let v = i as f64;
                return (v as i64 == i && i.unsigned_abs() <= 1 << 53)
                    .then(|| self.exact_bits(Number::Float(v)))
                    .flatten();
            }
            (_, Number::Int(i)) => i128::from(i),
            // An integral float that f64 holds exactly.
            (_, Number::Float(v)) if v.fract() == 0.0 && v.abs() <= (1u64 << 53) as f64 => {
                v as i128
            }
            (_, Number::Float(_)) => return None,
        };
        let (lo, hi) = match self {
            ElemTy::Bool => (0, 1),
            ElemTy::I8 | ElemTy::I16 | ElemTy::I32 | ElemTy::I64 | ElemTy::Isize => {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            }
            _ => (-(1i128 << (bits - 1)), (1i128 << bits) - 1),
        };
        let mask = u64::MAX >> (64 - bits);
        (lo..=hi).contains(&int).then_some(int as u64 & mask)
    }
}

/// A number as the manifest writes it. TOML keeps integers and floats
/// apart, and an integer past 2^53 has no exact `f64`: reading every value
/// as `f64` changed `9007199254740993` to `...992` without a word.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Number {
    /// A TOML integer.
    Int(i64),
    /// A TOML float.
    Float(f64),
}

impl Number {
    /// `start + step * i`: in integers where both are integers (`None` on
    /// overflow), else in `f64`.
    fn iota(start: Number, step: Number, i: usize) -> Option<Number> {
        match (start, step) {
            (Number::Int(a), Number::Int(d)) => {
                let v = i128::from(a) + i128::from(d) * i as i128;
                i64::try_from(v).ok().map(Number::Int)
            }
            _ => Some(Number::Float(start.as_f64() + step.as_f64() * i as f64)),
        }
    }

    fn as_f64(self) -> f64 {
        match self {
            Number::Int(i) => i as f64,
            Number::Float(v) => v,
        }
    }
}

impl std::fmt::Display for Number {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Number::Int(i) => write!(f, "{i}"),
            Number::Float(v) => write!(f, "{v:?}"),
        }
    }
}

/// How a buffer starts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Init {
    /// All zero.
    #[default]
    Zero,
    /// Every element `v`.
    Fill(Number),
    /// `start + i * step`.
    Iota {
        /// The first value.
        start: Number,
        /// The difference between neighbours.
        step: Number,
    },
    /// These values (the rest zero).
    Values(Vec<Number>),
}

/// A buffer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BufferSpec {
    /// Its name, used by `args`.
    pub name: String,
    /// Element type.
    pub ty: ElemTy,
    /// Element count.
    pub len: usize,
    /// Initial contents.
    #[serde(default)]
    pub init: Init,
    /// How many elements (from the start) to read back and compare.
    #[serde(default)]
    pub readback: usize,
}

impl BufferSpec {
    /// Element `i` as the manifest gives it; `None` where an iota
    /// overflows.
    fn initial_value(&self, i: usize) -> Option<Number> {
        match &self.init {
            Init::Zero => Some(Number::Int(0)),
            Init::Fill(v) => Some(*v),
            Init::Iota { start, step } => Number::iota(*start, *step, i),
            Init::Values(vs) => Some(vs.get(i).copied().unwrap_or(Number::Int(0))),
        }
    }

    /// The initial bit pattern of element `i`, which [`Manifest::validate`]
    /// has checked the type holds exactly.
    pub fn initial_bit(&self, i: usize) -> u64 {
        self.initial_value(i)
            .and_then(|v| self.ty.exact_bits(v))
            .unwrap_or(0)
    }

    /// The first element the type cannot hold exactly, with its value.
    fn first_inexact(&self) -> Option<(usize, String)> {
        let bad = |i: usize| match self.initial_value(i) {
            Some(v) => self.ty.exact_bits(v).is_none().then(|| v.to_string()),
            None => Some("an integer past i64".into()),
        };
        match &self.init {
            Init::Zero => None,
            // Integer steps are monotonic: the ends decide.
            Init::Iota {
                start: Number::Int(_),
                step: Number::Int(_),
            } if self.len > 0 => [0, self.len - 1]
                .into_iter()
                .find_map(|i| bad(i).map(|v| (i, v))),
            Init::Values(vs) => (0..vs.len()).find_map(|i| bad(i).map(|v| (i, v))),
            _ => (0..self.len).find_map(|i| bad(i).map(|v| (i, v))),
        }
    }

    /// The initial bit patterns, one per element.
    pub fn initial_bits(&self) -> Vec<u64> {
        (0..self.len).map(|i| self.initial_bit(i)).collect()
    }

    /// The initial contents as little-endian bytes, built without an
    /// intermediate copy.
    pub fn initial_bytes(&self) -> Vec<u8> {
        let n = self.ty.size();
        let mut out = Vec::with_capacity(self.len * n);
        for i in 0..self.len {
            out.extend_from_slice(&self.initial_bit(i).to_le_bytes()[..n]);
        }
        out
    }

    /// Size in bytes; `None` if it overflows.
    pub fn bytes(&self) -> Option<u64> {
        (self.len as u64).checked_mul(self.ty.size() as u64)
    }
}

/// The most bytes all buffers of one fixture may take together (each exists
/// on the device and in the host program): 1 GiB.
pub const MAX_BUFFER_BYTES: u64 = 1 << 30;

/// Whether `name` is a plain Rust identifier (ASCII letters, digits and `_`,
/// not starting with a digit, not a keyword). Names from a manifest never
/// reach generated code, but a kernel name is called by path, so this is
/// checked before anything is generated.
pub fn is_identifier(name: &str) -> bool {
    const KEYWORDS: [&str; 51] = [
        "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn",
        "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref",
        "return", "self", "Self", "static", "struct", "super", "trait", "true", "type", "unsafe",
        "use", "where", "while", "async", "await", "dyn", "abstract", "become", "box", "do",
        "final", "macro", "override", "priv", "typeof", "unsized", "virtual", "yield", "try",
    ];
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    (first == '_' || first.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
        && name != "_"
        && !KEYWORDS.contains(&name)
}

/// A kernel argument: a buffer, or a scalar of a given type.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct ArgSpec {
    pub buffer: Option<String>,
    pub u8: Option<Number>,
    pub u16: Option<Number>,
    pub u32: Option<Number>,
    pub u64: Option<Number>,
    pub i8: Option<Number>,
    pub i16: Option<Number>,
    pub i32: Option<Number>,
    pub i64: Option<Number>,
    pub f32: Option<Number>,
    pub f64: Option<Number>,
    pub usize: Option<Number>,
    pub isize: Option<Number>,
    pub bool: Option<bool>,
}

/// A resolved argument.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    /// A buffer by name.
    Buffer(String),
    /// A scalar: its type and bit pattern.
    Scalar(ElemTy, u64),
}

impl ArgSpec {
    /// The argument it describes, or why it is malformed.
    pub fn resolve(&self) -> Result<Arg, ManifestError> {
        let scalars = [
            (ElemTy::U8, self.u8),
            (ElemTy::U16, self.u16),
            (ElemTy::U32, self.u32),
            (ElemTy::U64, self.u64),
            (ElemTy::I8, self.i8),
            (ElemTy::I16, self.i16),
            (ElemTy::I32, self.i32),
            (ElemTy::I64, self.i64),
            (ElemTy::F32, self.f32),
            (ElemTy::F64, self.f64),
            (ElemTy::Usize, self.usize),
            (ElemTy::Isize, self.isize),
            (ElemTy::Bool, self.bool.map(|b| Number::Int(b.into()))),
        ];
        let mut found: Vec<Arg> = Vec::new();
        for (t, v) in scalars {
            if let Some(v) = v {
                let bits = t.exact_bits(v).ok_or(ManifestError::InexactArgument {
                    value: v.to_string(),
                    ty: t,
                })?;
                found.push(Arg::Scalar(t, bits));
            }
        }
        if let Some(b) = &self.buffer {
            found.push(Arg::Buffer(b.clone()));
        }
        match found.len() {
            1 => Ok(found.remove(0)),
            0 => Err(ManifestError::ArgumentWithoutKind),
            _ => Err(ManifestError::ArgumentWithManyKinds),
        }
    }
}

/// One kernel launch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaunchSpec {
    /// The kernel's name (its `#[no_mangle]` name).
    pub kernel: String,
    /// Grid size (x, y, z), in blocks; the manifest may give `[x, y]`, and z
    /// is then 1.
    #[serde(deserialize_with = "dims")]
    pub grid: [u32; 3],
    /// Block size (x, y, z), in threads; `[x, y]` means z = 1.
    #[serde(deserialize_with = "dims")]
    pub block: [u32; 3],
    /// Arguments, one per MIR parameter.
    #[serde(default)]
    pub args: Vec<ArgSpec>,
}

impl LaunchSpec {
    /// The launch's shape, as the devices take it.
    pub fn config(&self) -> crate::device::LaunchConfig {
        let [gx, gy, gz] = self.grid;
        let [bx, by, bz] = self.block;
        crate::device::LaunchConfig::xyz((gx, gy, gz), (bx, by, bz))
    }
}

/// Reads a launch dimension: `[x, y]` (the two-dimensional form every manifest
/// used first, z = 1) or `[x, y, z]`.
fn dims<'de, D: serde::Deserializer<'de>>(d: D) -> Result<[u32; 3], D::Error> {
    let v = Vec::<u32>::deserialize(d)?;
    match v[..] {
        [x, y] => Ok([x, y, 1]),
        [x, y, z] => Ok([x, y, z]),
        _ => Err(serde::de::Error::invalid_length(
            v.len(),
            &"a dimension of 2 or 3 extents, [x, y] or [x, y, z]",
        )),
    }
}

/// A fixture's manifest.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Shape checks to run (`no-helper-alloca`, `constants-read-only`, `stable-keys`).
    #[serde(default)]
    pub shape: Vec<String>,
    /// Built-in shape checks this fixture is known to fail, each explained in
    /// its README: a recorded gap of the lowering, never run by the oracle
    /// for it and skipped by the test that runs every check on every fixture.
    #[serde(default)]
    pub shape_known_failures: Vec<String>,
    /// For a negative fixture: the rule (`mir_lower::Rule::name`) it must break.
    pub expect_error: Option<String>,
    /// Buffers.
    #[serde(default)]
    pub buffer: Vec<BufferSpec>,
    /// Launches, in order.
    #[serde(default)]
    pub launch: Vec<LaunchSpec>,
    /// Optional hand-written expectations, by buffer (a second check only).
    #[serde(default)]
    pub expected: BTreeMap<String, Vec<Number>>,
    /// Seconds the host program may run (default 120); the whole pipeline is
    /// reported as hung after three times that plus a minute.
    pub timeout_s: Option<u64>,
    /// For a negative fixture: the virtual device must find a data race (the
    /// verdict `race`), before any value is compared.
    #[serde(default)]
    pub expect_race: bool,
    /// Instructions each simulated thread may run in one launch before the
    /// virtual device calls it a timeout (default: the device's own limit).
    pub step_limit: Option<u64>,
    /// crates.io dependencies of the kernel, as in a `Cargo.toml`
    /// (`libm = { version = "0.2", default-features = false }`), pinned by
    /// the `Cargo.lock` beside the kernel (`kernel-deps`).
    #[serde(default, skip_serializing_if = "toml::Table::is_empty")]
    pub dependencies: toml::Table,
}

impl Manifest {
    /// The checked dependency table.
    pub fn dependency_table(&self) -> Result<kernel_deps::DependencyTable, ManifestError> {
        kernel_deps::DependencyTable::from_toml(&self.dependencies)
            .map_err(ManifestError::Dependency)
    }

    /// Names are identifiers and distinct, buffers fit in
    /// [`MAX_BUFFER_BYTES`], launches have at least one thread.
    pub fn validate(&self) -> Result<(), ManifestError> {
        self.dependency_table()?;
        let mut seen = std::collections::BTreeSet::new();
        let mut total: u64 = 0;
        for b in &self.buffer {
            if b.ty == ElemTy::Bool {
                return Err(ManifestError::BoolBuffer(b.name.clone()));
            }
            if !is_identifier(&b.name) {
                return Err(ManifestError::BufferName(b.name.clone()));
            }
            if !seen.insert(b.name.as_str()) {
                return Err(ManifestError::DuplicateBuffer(b.name.clone()));
            }
            total = b
                .bytes()
                .and_then(|n| total.checked_add(n))
                .filter(|t| *t <= MAX_BUFFER_BYTES)
                .ok_or_else(|| ManifestError::TooManyBytes {
                    buffer: b.name.clone(),
                    len: b.len,
                    ty: b.ty,
                })?;
            if let Some((index, value)) = b.first_inexact() {
                return Err(ManifestError::InexactValue {
                    buffer: b.name.clone(),
                    index,
                    value,
                    ty: b.ty,
                });
            }
        }
        for (name, values) in &self.expected {
            let Some(b) = self.buffer.iter().find(|b| &b.name == name) else {
                continue;
            };
            if let Some((index, v)) = values
                .iter()
                .enumerate()
                .find(|(_, v)| b.ty.exact_bits(**v).is_none())
            {
                return Err(ManifestError::InexactValue {
                    buffer: format!("[expected] {name}"),
                    index,
                    value: v.to_string(),
                    ty: b.ty,
                });
            }
        }
        for l in &self.launch {
            if !is_identifier(&l.kernel) {
                return Err(ManifestError::KernelName(l.kernel.clone()));
            }
            if l.grid.iter().chain(&l.block).any(|d| *d == 0) {
                return Err(ManifestError::ZeroDimension(l.kernel.clone()));
            }
        }
        if let Some(check) = self
            .shape
            .iter()
            .find(|c| self.shape_known_failures.contains(c))
        {
            return Err(ManifestError::ShapeCheckBothWays(check.clone()));
        }
        if let Some(rule) = &self.expect_error
            && self.expect_race
        {
            return Err(ManifestError::ErrorAndRace(rule.clone()));
        }
        Ok(())
    }

    /// Seconds the host program may run.
    pub fn host_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.timeout_s.unwrap_or(120))
    }
}

/// A fixture on disk.
#[derive(Clone, Debug)]
pub struct Fixture {
    /// Its name (the folder name).
    pub name: String,
    /// The folder.
    pub dir: PathBuf,
    /// The kernel source.
    pub kernel: PathBuf,
    /// The manifest.
    pub manifest: Manifest,
}

/// Why a fixture could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum FixtureError {
    /// A file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The manifest is not TOML of the manifest's shape.
    #[error("{path}: {message}")]
    Toml {
        /// The manifest.
        path: PathBuf,
        /// The TOML reader's message.
        message: String,
    },
    /// The manifest breaks a rule of its own.
    #[error("{path}: {source}")]
    Manifest {
        /// The manifest.
        path: PathBuf,
        /// What is wrong.
        source: ManifestError,
    },
}

/// What makes a manifest unusable, found before anything runs.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ManifestError {
    /// The `[dependencies]` table is refused.
    #[error(transparent)]
    Dependency(kernel_deps::SpecError),
    /// An argument names neither a buffer nor a scalar type.
    #[error("an argument needs `buffer` or one scalar type key")]
    ArgumentWithoutKind,
    /// An argument names several.
    #[error("an argument has more than one of `buffer` and the scalar keys")]
    ArgumentWithManyKinds,
    /// A buffer of `bool`.
    #[error("buffer `{0}`: `bool` is for scalar arguments; use `u8` buffers")]
    BoolBuffer(String),
    /// A buffer name that is not an identifier.
    #[error("buffer name {0:?} is not an identifier (ASCII letters, digits and `_`)")]
    BufferName(String),
    /// Two buffers with one name.
    #[error("two buffers are named `{0}`")]
    DuplicateBuffer(String),
    /// The buffers take more than [`MAX_BUFFER_BYTES`].
    #[error(
        "buffer `{buffer}` ({len} elements of {}) takes the fixture past its limit of {MAX_BUFFER_BYTES} bytes of buffers",
        ty.rust()
    )]
    TooManyBytes {
        /// The buffer that crosses the limit.
        buffer: String,
        /// Its element count.
        len: usize,
        /// Its element type.
        ty: ElemTy,
    },
    /// A buffer value its type cannot hold exactly.
    #[error(
        "buffer `{buffer}` element {index}: {value} is not exactly a {} (out of range, a fraction, or a float integer past 2^53)",
        ty.rust()
    )]
    InexactValue {
        /// The buffer (or `[expected] name`).
        buffer: String,
        /// The element.
        index: usize,
        /// The value as written.
        value: String,
        /// The buffer's type.
        ty: ElemTy,
    },
    /// A scalar argument its type cannot hold exactly.
    #[error("argument {value} is not exactly a {} (out of range, a fraction, or a float integer past 2^53)", ty.rust())]
    InexactArgument {
        /// The value as written.
        value: String,
        /// The argument's type.
        ty: ElemTy,
    },
    /// A kernel name that is not an identifier.
    #[error("kernel name {0:?} is not an identifier")]
    KernelName(String),
    /// A launch with a zero dimension.
    #[error("launch of `{0}` has a zero grid or block dimension")]
    ZeroDimension(String),
    /// A shape check both required and recorded as a known failure.
    #[error("shape check `{0}` is both in `shape` and in `shape_known_failures`")]
    ShapeCheckBothWays(String),
    /// Both a refusal and a race expected.
    #[error("a fixture expects either the error `{0}` or a race, not both")]
    ErrorAndRace(String),
    /// A launch names a buffer the manifest does not declare.
    #[error("launch of `{kernel}` names unknown buffer `{buffer}`")]
    UnknownBuffer {
        /// The kernel.
        kernel: String,
        /// The buffer name.
        buffer: String,
    },
    /// A buffer reads back more elements than it has.
    #[error("buffer `{0}` reads back more than its length")]
    ReadbackTooLong(String),
}

impl Fixture {
    /// Loads the fixture in `dir`.
    pub fn load(dir: &Path) -> Result<Fixture, FixtureError> {
        let kernel = dir.join("kernel.rs");
        if !kernel.exists() {
            return Err(FixtureError::Io {
                path: kernel,
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "no kernel.rs"),
            });
        }
        let mpath = dir.join("manifest.toml");
        let text = std::fs::read_to_string(&mpath).map_err(|source| FixtureError::Io {
            path: mpath.clone(),
            source,
        })?;
        let manifest: Manifest = toml::from_str(&text).map_err(|e| FixtureError::Toml {
            path: mpath.clone(),
            message: e.to_string(),
        })?;
        let bad = |source: ManifestError| FixtureError::Manifest {
            path: mpath.clone(),
            source,
        };
        for l in &manifest.launch {
            for a in &l.args {
                match a.resolve().map_err(&bad)? {
                    Arg::Buffer(b) if !manifest.buffer.iter().any(|x| x.name == b) => {
                        return Err(bad(ManifestError::UnknownBuffer {
                            kernel: l.kernel.clone(),
                            buffer: b,
                        }));
                    }
                    _ => {}
                }
            }
        }
        manifest.validate().map_err(&bad)?;
        for b in &manifest.buffer {
            if b.readback > b.len {
                return Err(bad(ManifestError::ReadbackTooLong(b.name.clone())));
            }
        }
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .map_or_else(|| dir.display().to_string(), str::to_string);
        Ok(Fixture {
            name,
            dir: dir.to_path_buf(),
            kernel,
            manifest,
        })
    }

    /// Every fixture folder under `root` (folders holding a `kernel.rs`), sorted.
    pub fn discover(root: &Path) -> Result<Vec<PathBuf>, FixtureError> {
        let entries = std::fs::read_dir(root).map_err(|source| FixtureError::Io {
            path: root.to_path_buf(),
            source,
        })?;
        let mut dirs: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.join("kernel.rs").exists())
            .collect();
        dirs.sort();
        Ok(dirs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(dims: &str) -> Result<LaunchSpec, toml::de::Error> {
        toml::from_str(&format!("kernel = \"k\"\n{dims}"))
    }

    #[test]
    fn two_dimensional_launches_default_z_to_one() {
        let l = launch("grid = [2, 3]\nblock = [4, 5]").expect("2-D launch");
        assert_eq!((l.grid, l.block), ([2, 3, 1], [4, 5, 1]));
        let cfg = l.config();
        assert_eq!((cfg.grid.z, cfg.block.z), (1, 1));
    }

    #[test]
    fn three_dimensional_launches_keep_z() {
        let l = launch("grid = [2, 2, 4]\nblock = [4, 4, 2]").expect("3-D launch");
        assert_eq!((l.grid, l.block), ([2, 2, 4], [4, 4, 2]));
        assert_eq!(l.config().grid.count(), 16);
        assert_eq!(l.config().block.count(), 32);
    }

    #[test]
    fn other_lengths_are_refused() {
        assert!(launch("grid = [2]\nblock = [4, 4]").is_err());
        assert!(launch("grid = [2, 1, 1, 1]\nblock = [4, 4]").is_err());
    }

    #[test]
    fn a_zero_z_is_a_zero_dimension() {
        let m = Manifest {
            launch: vec![launch("grid = [1, 1, 0]\nblock = [1, 1]").expect("parses")],
            ..Manifest::default()
        };
        assert_eq!(m.validate(), Err(ManifestError::ZeroDimension("k".into())));
    }

    fn arg(text: &str) -> Result<Arg, ManifestError> {
        toml::from_str::<ArgSpec>(text)
            .expect("an argument table")
            .resolve()
    }

    #[test]
    fn integers_past_two_to_the_53_stay_exact() {
        // As `f64` this was 9007199254740992.
        assert_eq!(
            arg("u64 = 9007199254740993"),
            Ok(Arg::Scalar(ElemTy::U64, 9_007_199_254_740_993))
        );
        assert_eq!(
            arg("isize = 9223372036854775807"),
            Ok(Arg::Scalar(ElemTy::Isize, i64::MAX as u64))
        );
        // Two's complement for an unsigned type: TOML has no u64::MAX.
        assert_eq!(arg("u64 = -1"), Ok(Arg::Scalar(ElemTy::U64, u64::MAX)));
        assert_eq!(
            arg("f32 = 2"),
            Ok(Arg::Scalar(ElemTy::F32, 2f32.to_bits().into()))
        );
    }

    #[test]
    fn a_value_its_type_cannot_hold_is_refused_not_wrapped() {
        for (text, ty) in [
            ("u8 = 300", ElemTy::U8),
            ("i8 = 128", ElemTy::I8),
            ("u32 = 1.5", ElemTy::U32),
            ("u64 = 1e300", ElemTy::U64),
            ("f64 = 9007199254740993", ElemTy::F64),
        ] {
            match arg(text) {
                Err(ManifestError::InexactArgument { ty: t, .. }) => assert_eq!(t, ty, "{text}"),
                other => panic!("{text}: {other:?}"),
            }
        }
        let m: Manifest = toml::from_str(
            "[[buffer]]\nname = \"x\"\nty = \"u8\"\nlen = 4\ninit = { values = [1, 2, 256] }\n",
        )
        .expect("a manifest");
        assert_eq!(
            m.validate(),
            Err(ManifestError::InexactValue {
                buffer: "x".into(),
                index: 2,
                value: "256".into(),
                ty: ElemTy::U8,
            })
        );
        let iota: Manifest = toml::from_str(
            "[[buffer]]\nname = \"x\"\nty = \"i16\"\nlen = 40000\ninit = { iota = { start = 0, step = 1 } }\n",
        )
        .expect("a manifest");
        assert!(
            matches!(
                iota.validate(),
                Err(ManifestError::InexactValue { index: 39999, .. })
            ),
            "{:?}",
            iota.validate()
        );
    }
}
