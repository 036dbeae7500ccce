//! The NVVM IR printer: device IR to the LLVM 7 typed-pointer text dialect that
//! libNVVM 2.0 accepts.
//!
//! The output is a pure function of the module: entities are printed in index
//! order, values are named after their entities (`%v3`, `block2`), and nothing
//! depends on hashing, time or the environment, so it is deterministic byte for
//! byte.
//!
//! Layout of the output:
//! - the datalayout ([`device_ir::layout::DATALAYOUT`]) and the
//!   `nvptx64-nvidia-cuda` triple;
//! - globals, each typed as a packed struct of `[N x i8]` runs (defined bytes as
//!   `c"..."`, undefined ones as `undef`) and `i8*` pointer slots, where a slot is
//!   `addrspacecast (getelementptr (i8, bitcast @target, addend))` to generic; a
//!   global without an initializer is `[size x i8] undef`;
//! - functions, with block parameters turned into `phi` nodes and constants
//!   printed inline at their uses; a `global_addr` is a constant `bitcast` of the
//!   global, so several typed views share one symbol;
//! - declarations of the NVVM intrinsics used;
//! - `!nvvmir.version = !{!0}` with `!0 = !{i32 2, i32 0}`, and
//!   `!nvvm.annotations` marking each kernel.

mod atomics;
mod function;
pub(crate) mod text;

use std::collections::BTreeSet;
use std::fmt::Write as _;

use cranelift_entity::SecondaryMap;
use device_ir::layout::DATALAYOUT;
use device_ir::{
    DYNAMIC_SHARED_SYMBOL, FunctionKind, GlobalData, GlobalId, Linkage, Module, RelocTarget,
};

/// The target triple libNVVM expects for 64-bit code.
pub const TRIPLE: &str = "nvptx64-nvidia-cuda";

/// The NVVM IR version the printer writes (`!nvvmir.version`) and the binding
/// requires of libNVVM.
pub const NVVM_IR_VERSION: (i32, i32) = (2, 0);

/// Prints `module` as NVVM IR text.
///
/// The module should have passed [`device_ir::verify`]; the printer assumes its
/// invariants. Use [`emit`] to verify and print in one step.
///
/// # Panics
/// If the module breaks handle integrity (a handle out of bounds), which
/// [`device_ir::verify`] reports.
pub fn print_module(module: &Module) -> String {
    let mut p = Printer::new(module);
    p.module();
    p.out
}

/// Verifies `module` and prints it.
///
/// # Errors
/// The verifier's errors, if any.
pub fn emit(module: &Module) -> Result<String, device_ir::VerifierErrors> {
    device_ir::verify(module)?;
    Ok(print_module(module))
}

pub(crate) struct Printer<'m> {
    pub(crate) m: &'m Module,
    pub(crate) out: String,
    /// The LLVM type of each global.
    pub(crate) global_ty: SecondaryMap<GlobalId, String>,
    /// The LLVM spelling of each type.
    pub(crate) ty_text: SecondaryMap<device_ir::Ty, String>,
    /// Declarations of the intrinsics used, sorted.
    pub(crate) intrinsics: BTreeSet<String>,
    /// The functions that run a collective ([`Module::convergent_functions`]).
    pub(crate) convergent: cranelift_entity::EntitySet<device_ir::FuncId>,
    /// Whether a function whose address is taken runs a collective: an
    /// indirect call, which may reach it, is then `convergent` itself.
    pub(crate) indirect_convergent: bool,
}

impl<'m> Printer<'m> {
    fn new(m: &'m Module) -> Self {
        let mut global_ty = SecondaryMap::new();
        for (id, g) in m.globals.iter() {
            global_ty[id] = global_fields(g).0;
        }
        let mut ty_text = SecondaryMap::new();
        for (ty, _) in m.types.iter() {
            ty_text[ty] = m.types.display(ty).to_string();
        }
        let convergent = m.convergent_functions();
        let indirect_convergent = m
            .address_taken_functions()
            .into_iter()
            .any(|f| convergent.contains(f));
        Printer {
            m,
            out: String::with_capacity(1 << 16),
            global_ty,
            ty_text,
            convergent,
            indirect_convergent,
            intrinsics: BTreeSet::new(),
        }
    }

    fn module(&mut self) {
        let _ = writeln!(self.out, "target datalayout = \"{DATALAYOUT}\"");
        let _ = writeln!(self.out, "target triple = \"{TRIPLE}\"");
        if !self.m.globals.is_empty() {
            self.out.push('\n');
        }
        for (id, _) in self.m.globals.iter() {
            self.global(id);
        }
        // The launch gives its size; every use names its start.
        if let Some(align) = self.m.dynamic_shared_align() {
            if self.m.globals.is_empty() {
                self.out.push('\n');
            }
            let _ = writeln!(
                self.out,
                "@{DYNAMIC_SHARED_SYMBOL} = external addrspace(3) global [0 x i8], align {align}"
            );
        }
        for (id, _) in self.m.functions.iter() {
            self.out.push('\n');
            self.function(id);
        }
        if !self.intrinsics.is_empty() {
            self.out.push('\n');
            for decl in std::mem::take(&mut self.intrinsics) {
                self.out.push_str(&decl);
                self.out.push('\n');
            }
        }
        self.metadata();
    }

    fn global(&mut self, id: GlobalId) {
        let m = self.m;
        let g = &m.globals[id];
        let (ty, value) = global_fields(g);
        let value = match value {
            None => "undef".to_owned(),
            Some(fields) => {
                let mut s = String::from(if fields.is_empty() { "<{}>" } else { "<{ " });
                if !fields.is_empty() {
                    let parts: Vec<String> =
                        fields.into_iter().map(|f| self.field_value(f)).collect();
                    s.push_str(&parts.join(", "));
                    s.push_str(" }>");
                }
                s
            }
        };
        let linkage = match g.linkage {
            Linkage::Internal => "internal ",
            Linkage::External | Linkage::ExternallyInitialized => "",
        };
        // The host writes an externally initialized global, so it is no
        // LLVM `constant` even where device code only reads it (clang
        // prints CUDA's `__constant__` the same way).
        let kind = match (g.linkage, g.mutable) {
            (Linkage::ExternallyInitialized, _) => "externally_initialized global",
            (_, true) => "global",
            (_, false) => "constant",
        };
        let _ = writeln!(
            self.out,
            "@{} = {linkage}addrspace({}) {kind} {ty} {value}, align {}",
            g.symbol,
            g.space.number(),
            g.align
        );
    }

    fn field_value(&self, field: Field) -> String {
        match field {
            Field::Bytes(bytes) => {
                let mut s = format!("[{} x i8] c\"", bytes.len());
                text::escape(&mut s, &bytes);
                s.push('"');
                s
            }
            Field::Undef(n) => format!("[{n} x i8] undef"),
            Field::Pointer {
                target: RelocTarget::Func(f),
                ..
            } => {
                // The verifier holds a function's addend at 0: its entry.
                let func = &self.m.functions[f];
                format!(
                    "i8* bitcast ({}* @{} to i8*)",
                    self.fn_ty(&func.sig),
                    func.name
                )
            }
            Field::Pointer {
                target: RelocTarget::Global(target),
                addend,
            } => {
                let t = &self.m.globals[target];
                let sp = t.space.number();
                format!(
                    "i8* addrspacecast (i8 addrspace({sp})* getelementptr (i8, i8 addrspace({sp})* bitcast ({} addrspace({sp})* @{} to i8 addrspace({sp})*), i64 {addend}) to i8*)",
                    self.global_ty[target], t.symbol
                )
            }
        }
    }

    fn metadata(&mut self) {
        let kernels: Vec<_> = self
            .m
            .functions
            .iter()
            .filter(|(_, f)| f.kind == FunctionKind::Kernel)
            .collect();
        self.out.push('\n');
        self.out.push_str("!nvvmir.version = !{!0}\n");
        if !kernels.is_empty() {
            let refs: Vec<String> = (1..=kernels.len()).map(|i| format!("!{i}")).collect();
            let _ = writeln!(self.out, "!nvvm.annotations = !{{{}}}", refs.join(", "));
        }
        let (major, minor) = NVVM_IR_VERSION;
        let _ = writeln!(self.out, "!0 = !{{i32 {major}, i32 {minor}}}");
        for (i, (_, f)) in kernels.iter().enumerate() {
            let params: Vec<String> = f
                .sig
                .params
                .iter()
                .map(|&p| self.m.types.display(p).to_string())
                .collect();
            let _ = writeln!(
                self.out,
                "!{} = !{{void ({})* @{}, !\"kernel\", i32 1}}",
                i + 1,
                params.join(", "),
                f.name
            );
        }
    }
}

/// One field of a global's packed-struct initializer.
enum Field {
    Bytes(Vec<u8>),
    Undef(u64),
    Pointer { target: RelocTarget, addend: i64 },
}

/// The LLVM type of a global and, if it has an initializer, its fields: what
/// rustc's `const_alloc_to_llvm` does — the byte runs between relocations, then
/// each relocation as a pointer.
fn global_fields(g: &GlobalData) -> (String, Option<Vec<Field>>) {
    let Some(init) = &g.init else {
        return (format!("[{} x i8]", g.size), None);
    };
    let image = init.image();
    let mut fields = Vec::new();
    let mut pos = 0usize;
    let push_runs = |fields: &mut Vec<Field>, bytes: &[Option<u8>]| {
        let mut i = 0;
        while i < bytes.len() {
            let defined = bytes[i].is_some();
            let start = i;
            while i < bytes.len() && bytes[i].is_some() == defined {
                i += 1;
            }
            if defined {
                fields.push(Field::Bytes(
                    bytes[start..i].iter().map(|b| b.unwrap_or(0)).collect(),
                ));
            } else {
                fields.push(Field::Undef((i - start) as u64));
            }
        }
    };
    for r in init.sorted_relocations() {
        let start = (r.offset as usize).min(image.len());
        push_runs(&mut fields, &image[pos.min(start)..start]);
        fields.push(Field::Pointer {
            target: r.target,
            addend: r.addend,
        });
        pos = start + device_ir::layout::POINTER_SIZE as usize;
    }
    push_runs(&mut fields, &image[pos.min(image.len())..]);
    let tys: Vec<String> = fields
        .iter()
        .map(|f| match f {
            Field::Bytes(b) => format!("[{} x i8]", b.len()),
            Field::Undef(n) => format!("[{n} x i8]"),
            Field::Pointer { .. } => "i8*".to_owned(),
        })
        .collect();
    let ty = if tys.is_empty() {
        "<{}>".to_owned()
    } else {
        format!("<{{ {} }}>", tys.join(", "))
    };
    (ty, Some(fields))
}
