//! Layouts the kernel's report did not print: a dependency function
//! imported from its crate's MIR uses types the kernel never does, and a
//! kernel local typed by a function item may be missing too. One more
//! rustc run asks for each one's size, which makes rustc print its layout.
//! The layout probe proper ([`super::probe`]) measures what no report
//! prints (tuples, niches, sizedness, field order).

use std::collections::BTreeSet;
use std::path::Path;

use super::probe::{
    ProbeError, ProbeSite, fn_items_as_unit, local_adts, nameable, private_probe_lines, run_probe,
};
use crate::layout::LayoutTable;
use crate::model::{Crate, Ty};
use crate::rustc::{RustcError, RustcOptions};

/// The structs and enums that probed functions hold in locals and that
/// rustc's report did not print (a dependency function imported from its
/// crate's MIR uses types the kernel never does; a kernel local typed by a
/// function item, such as bitvec's `Map<_, fn(&u32) -> u32 {load_value}>`,
/// may be missing too): [`print_unprinted_layouts`] asks for their size,
/// which makes rustc print their layouts.
pub fn unprinted_types(krate: &Crate) -> BTreeSet<Ty> {
    local_adts(krate, false)
        .into_iter()
        .filter(|t| krate.layouts.get(&t.to_string()).is_none() && nameable(&fn_items_as_unit(t)))
        .collect()
}

/// Adds to `krate`'s layout table what rustc prints when asked for the
/// size of each of [`unprinted_types`]: the kernel is compiled once more
/// with `pub static LAYOUT_3: usize = size_of::<T>();` per type, and the
/// report of that run is read. A type source cannot name (a dependency's
/// private type) is left out and stays unprinted, as is everything when
/// rustc refuses the module for another reason: the lowering then refuses
/// what needs those layouts, naming them.
///
/// # Errors
///
/// [`ProbeError`] when the report that rustc printed does not parse.
pub fn print_unprinted_layouts(
    kernel: &Path,
    krate: &mut Crate,
    opts: &RustcOptions,
) -> Result<(), ProbeError> {
    let mut types: Vec<Ty> = unprinted_types(krate).into_iter().collect();
    for _ in 0..2 {
        if types.is_empty() {
            return Ok(());
        }
        let mut src = String::from(
            "#[allow(unused_imports)]\nuse crate::kernel::*;\nuse core::mem::size_of;\n",
        );
        for (i, t) in types.iter().enumerate() {
            src.push_str(&format!(
                "pub static LAYOUT_{i}: usize = size_of::<{}>();\n",
                fn_items_as_unit(t).to_rust_source()
            ));
        }
        match run_probe(kernel, opts, &src) {
            Ok(out) => {
                let printed = LayoutTable::parse(&out.type_sizes)
                    .map_err(|e| ProbeError::Layouts(e.to_string()))?;
                // A name either run printed with two layouts stays without one.
                krate.layouts.ambiguous.extend(printed.ambiguous);
                for (name, l) in printed.types {
                    if !krate.layouts.ambiguous.contains(&name) {
                        krate.layouts.types.entry(name).or_insert(l);
                    }
                }
                // A type probed with `()` for its function items takes
                // that type's layout.
                for t in &types {
                    let probed = fn_items_as_unit(t).to_string();
                    if probed != t.to_string()
                        && let Some(l) = krate.layouts.get(&probed).cloned()
                    {
                        krate.layouts.types.entry(t.to_string()).or_insert(l);
                    }
                }
                return Ok(());
            }
            Err(RustcError::Failed { stderr, .. }) => {
                let private = private_probe_lines(&stderr, &src, &ProbeSite::of(kernel));
                tracing::debug!("layouts of dependency types refused by rustc: {private:?}");
                types = types
                    .into_iter()
                    .enumerate()
                    .filter(|(i, _)| !private.contains(&format!("LAYOUT_{i}")))
                    .map(|(_, t)| t)
                    .collect();
                if private.is_empty() {
                    return Ok(());
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}
