//! A readable view of evaluated constants, for `mir-dump`: each item's
//! allocation graph as hex bytes, relocations and targets.

use serde::Serialize;

use super::{EvaluatedBy, Evaluation, Target, Unsupported};

/// Serializes as serde serializes a `Result`, the error as its message, so
/// `mir-dump`'s JSON reads `{"Err": "cannot evaluate ..."}`.
fn by_or_message<S: serde::Serializer>(
    r: &Result<EvaluatedBy, Unsupported>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match r {
        Ok(by) => s.serialize_newtype_variant("Result", 0, "Ok", by),
        Err(e) => s.serialize_newtype_variant("Result", 1, "Err", &e.to_string()),
    }
}

/// One allocation of a graph.
#[derive(Debug, Serialize)]
pub struct AllocView {
    /// Its name (`ealloc3`).
    pub alloc: String,
    /// Size in bytes.
    pub size: u64,
    /// Alignment in bytes.
    pub align: u64,
    /// Whether it is mutable memory.
    pub mutable: bool,
    /// The bytes as hex pairs, `__` for uninitialized ones.
    pub hex: String,
    /// The pointers it stores: offset, target (`ealloc4` or `static kernel::S`), addend.
    pub relocations: Vec<(u64, String, u64)>,
}

/// One evaluated item.
#[derive(Debug, Serialize)]
pub struct ItemView {
    /// The item (`kernel::PAIR`).
    pub item: String,
    /// Who evaluated it, or why nothing could (shown as its message).
    #[serde(serialize_with = "by_or_message")]
    pub evaluated_by: Result<EvaluatedBy, Unsupported>,
    /// Its value's allocation first, then everything reachable from it.
    pub graph: Vec<AllocView>,
}

/// Views of every item whose name starts with `prefix` (e.g. `kernel::`).
pub fn view(ev: &Evaluation, prefix: &str) -> Vec<ItemView> {
    ev.items
        .iter()
        .filter(|(name, _)| name.starts_with(prefix))
        .map(|(name, item)| {
            let graph = match &item.value {
                Ok(root) => ev
                    .memory
                    .reachable(*root)
                    .into_iter()
                    .map(|a| {
                        let al = &ev.memory.allocs[a];
                        let hex: Vec<String> = al
                            .bytes
                            .iter()
                            .zip(&al.init)
                            .map(|(b, i)| if *i { format!("{b:02x}") } else { "__".into() })
                            .collect();
                        let relocations = al
                            .relocs
                            .iter()
                            .map(|(o, r)| {
                                let t = match &r.target {
                                    Target::Alloc(t) => t.to_string(),
                                    Target::Static(s) => format!("static {s}"),
                                    Target::Function(f) => format!("fn {f}"),
                                };
                                (*o, t, r.addend)
                            })
                            .collect();
                        AllocView {
                            alloc: a.to_string(),
                            size: al.size(),
                            align: al.align,
                            mutable: al.mutable,
                            hex: hex.join(" "),
                            relocations,
                        }
                    })
                    .collect(),
                Err(_) => Vec::new(),
            };
            ItemView {
                item: name.clone(),
                evaluated_by: item.value.as_ref().map(|_| item.by).map_err(Clone::clone),
                graph,
            }
        })
        .collect()
}
