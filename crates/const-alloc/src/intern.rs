//! The interner: from an allocation graph and its roots to globals.
//!
//! [`Interner::intern`] runs four passes over the allocations reachable from
//! the roots:
//!
//! 1. **Discovery** walks the graph from the roots, checks every allocation
//!    (alignment, init mask, relocations: pointer-sized, aligned, inside, not
//!    overlapping) and resolves each relocation's target.
//! 2. **Owners** finds, for each anonymous allocation, the least path to it
//!    from a static: the shortest chain of relocation offsets, ties broken by
//!    the static's symbol and then the offsets. Only mutable anonymous
//!    allocations use it, to get a stable symbol.
//! 3. **Keys** computes content keys bottom-up with an explicit stack, so it
//!    never recurses. A static enters its referrers' keys by its symbol, so
//!    cycles through statics are fine; a cycle through anonymous allocations
//!    alone has no key and is an error.
//! 4. **Globals** sorts the allocations by symbol. Each run of one symbol
//!    (only immutable anonymous allocations can share one) becomes one
//!    global, numbered in symbol order, with its initializer.
//!
//! Nothing depends on the ids' values, on the order of the roots, or on
//! allocations that the roots do not reach: globals come out in symbol order.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt::Debug;
use std::ops::Range;

use crate::globals::{Chunk, GlobalData, GlobalId, GlobalKind, Interned, RelocSlot, SlotTarget};
use crate::graph::{AllocGraph, AllocRef, Mutability, Target};
use crate::key::{KeyHasher, TargetKey, mutable_key};
use crate::{InitMask, InternError, Key};
use symbols::{cmp_symbols, push_symbol, symbol_prefix};

/// The prefix of every symbol that the interner makes. Statics may not use it.
pub const SYMBOL_PREFIX: &str = "__const_";

/// The prefix of the symbol of a mutable anonymous allocation. It cannot be
/// confused with an immutable one, whose prefix is followed by a hex digit.
pub const MUTABLE_SYMBOL_PREFIX: &str = "__const_mut_";

/// Where interning starts: an allocation that the compiler names.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Root<Id> {
    /// A static's own allocation. Its global takes the static's symbol, and the
    /// static owns the mutable anonymous memory that it reaches.
    Static {
        /// The static's symbol, used as it is.
        symbol: String,
        /// The static's allocation.
        alloc: Id,
    },
    /// An anonymous allocation: a const item's value or a promoted.
    Anonymous(Id),
}

/// Turns allocation graphs into globals, for one target's pointer size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interner {
    pointer_size: u64,
}

impl Interner {
    /// An interner for pointers of `pointer_size` bytes (8 for nvptx64).
    ///
    /// # Panics
    /// If `pointer_size` is not a power of two.
    pub fn new(pointer_size: u64) -> Self {
        assert!(
            pointer_size.is_power_of_two(),
            "pointer size {pointer_size} is not a power of two"
        );
        Interner { pointer_size }
    }

    /// The pointer size in bytes. Pointers are also aligned to it.
    pub fn pointer_size(&self) -> u64 {
        self.pointer_size
    }

    /// Interns every allocation reachable from `roots`.
    ///
    /// The order of `roots` does not matter, and repeating a root is harmless.
    /// An allocation passed both as a static and as an anonymous root is the
    /// static.
    ///
    /// # Errors
    /// The first broken rule, as an [`InternError`]: an id missing from the
    /// graph, a malformed allocation or relocation, a static named twice, a
    /// cycle through anonymous allocations, or mutable anonymous memory that
    /// no static owns.
    pub fn intern<'g, G: AllocGraph>(
        &self,
        graph: &'g G,
        roots: impl IntoIterator<Item = Root<G::Id>>,
    ) -> Result<Interned<'g, G::Id>, InternError<G::Id>> {
        let mut roots: Vec<Root<G::Id>> = roots.into_iter().collect();
        roots.sort();
        roots.dedup();
        let mut pass = Pass::new(graph, self.pointer_size);
        pass.discover(&roots)?;
        pass.find_owners();
        pass.compute_keys()?;
        Ok(pass.into_interned())
    }
}

/// A relocation after discovery: checked and resolved.
struct NodeReloc {
    offset: u64,
    size: u64,
    addend: i64,
    target: NodeTarget,
}

/// A resolved relocation target.
#[derive(Clone, Copy)]
enum NodeTarget {
    /// An allocation of the graph, by node index.
    Node(u32),
    /// A static that is not among the roots, by index into `Pass::externs`.
    Extern(u32),
    /// A function, by index into `Pass::functions`.
    Function(u32),
}

/// A piece of an initializer, before globals exist.
enum RawChunk {
    Data(Range<u64>),
    Undef(Range<u64>),
    /// A relocation, by index into `Pass::relocs`.
    Pointer(u32),
}

/// One reached allocation.
struct Node<'g, Id: Clone> {
    id: Id,
    alloc: AllocRef<'g, Id>,
    /// The static's symbol, for a static's allocation.
    symbol: Option<String>,
    /// Its relocations in `Pass::relocs`, in offset order.
    relocs: Range<u32>,
    /// Its initializer pieces in `Pass::chunks`.
    chunks: Range<u32>,
}

impl<Id: Clone> Node<'_, Id> {
    fn is_anonymous(&self) -> bool {
        self.symbol.is_none()
    }
}

/// What decides a global: allocations with the same group share one.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Group<'a> {
    Static(&'a str),
    Constant(Key),
    Mutable(Key),
}

/// The state of one [`Interner::intern`] call. Relocations and chunks of all
/// nodes live in two flat vectors, so a node costs no allocation of its own.
struct Pass<'g, G: AllocGraph> {
    graph: &'g G,
    pointer_size: u64,
    nodes: Vec<Node<'g, G::Id>>,
    relocs: Vec<NodeReloc>,
    chunks: Vec<RawChunk>,
    externs: Vec<String>,
    /// The functions relocations point to, by symbol, in discovery order.
    functions: Vec<String>,
    index: HashMap<G::Id, u32>,
    /// Static symbol to allocation.
    statics: BTreeMap<String, G::Id>,
    /// For each node: the parent on its least path from a static and the
    /// relocation offset in the parent; `None` for statics and unowned nodes.
    parent: Vec<Option<(u32, u64)>>,
    /// For each node: the static that owns it, if any.
    owner: Vec<Option<u32>>,
    /// For each node: its content key, once computed.
    content: Vec<Key>,
    /// For each node: the key its referrers see (mutable key for mutable
    /// anonymous nodes, content key otherwise).
    identity: Vec<Key>,
}

impl<'g, G: AllocGraph> Pass<'g, G> {
    fn new(graph: &'g G, pointer_size: u64) -> Self {
        Pass {
            graph,
            pointer_size,
            nodes: Vec::new(),
            relocs: Vec::new(),
            chunks: Vec::new(),
            externs: Vec::new(),
            functions: Vec::new(),
            index: HashMap::new(),
            statics: BTreeMap::new(),
            parent: Vec::new(),
            owner: Vec::new(),
            content: Vec::new(),
            identity: Vec::new(),
        }
    }

    fn node_relocs(&self, v: usize) -> &[NodeReloc] {
        let r = &self.nodes[v].relocs;
        &self.relocs[r.start as usize..r.end as usize]
    }

    fn node_chunks(&self, v: usize) -> &[RawChunk] {
        let r = &self.nodes[v].chunks;
        &self.chunks[r.start as usize..r.end as usize]
    }

    /// Pass 1: reach, check and resolve every allocation.
    fn discover(&mut self, roots: &[Root<G::Id>]) -> Result<(), InternError<G::Id>> {
        let mut symbol_of: HashMap<G::Id, String> = HashMap::new();
        self.index.reserve(roots.len());
        self.nodes.reserve(roots.len());
        // `roots` is sorted, so statics come first, in symbol order.
        for root in roots {
            if let Root::Static { symbol, alloc } = root {
                if symbol.is_empty() || symbol.starts_with(SYMBOL_PREFIX) {
                    return Err(InternError::InvalidStaticSymbol {
                        symbol: symbol.clone(),
                    });
                }
                if let Some(&first) = self.statics.get(symbol) {
                    return Err(InternError::StaticSymbolClash {
                        symbol: symbol.clone(),
                        first,
                        second: *alloc,
                    });
                }
                if let Some(first) = symbol_of.get(alloc) {
                    return Err(InternError::StaticAllocTwice {
                        alloc: *alloc,
                        first: first.clone(),
                        second: symbol.clone(),
                    });
                }
                self.statics.insert(symbol.clone(), *alloc);
                symbol_of.insert(*alloc, symbol.clone());
            }
        }
        let mut externs: HashMap<String, u32> = HashMap::new();
        let mut functions: HashMap<String, u32> = HashMap::new();

        // Breadth-first, from the statics (in symbol order) and then the
        // anonymous roots (in id order).
        let mut queue: VecDeque<u32> = VecDeque::new();
        for root in roots {
            let id = match root {
                Root::Static { alloc, .. } | Root::Anonymous(alloc) => *alloc,
            };
            if self.index.contains_key(&id) {
                continue;
            }
            let alloc = self
                .graph
                .get(id)
                .ok_or(InternError::UnknownRoot { alloc: id })?;
            queue.push_back(self.add_node(id, alloc, &symbol_of));
        }
        while let Some(n) = queue.pop_front() {
            let order = self.check(n as usize)?;
            let start = self.relocs.len() as u32;
            let count = self.nodes[n as usize].alloc.relocations.len();
            for j in 0..count {
                let k = order.as_ref().map_or(j, |order| order[j]);
                let r = &self.nodes[n as usize].alloc.relocations[k];
                let (offset, size, addend) = (r.offset, r.size, r.addend);
                // A symbol outside the graph is a leaf: numbered once each.
                let leaf = match &r.target {
                    Target::Alloc(_) => None,
                    Target::Static(symbol) if self.statics.contains_key(symbol) => None,
                    Target::Static(symbol) => Some(NodeTarget::Extern(number(
                        &mut self.externs,
                        &mut externs,
                        symbol,
                    ))),
                    Target::Function(symbol) => Some(NodeTarget::Function(number(
                        &mut self.functions,
                        &mut functions,
                        symbol,
                    ))),
                };
                if let Some(target) = leaf {
                    self.relocs.push(NodeReloc {
                        offset,
                        size,
                        addend,
                        target,
                    });
                    continue;
                }
                let target_id = match &r.target {
                    Target::Alloc(t) => *t,
                    // A root static (an external one is a leaf, above).
                    Target::Static(symbol) => self.statics[symbol],
                    Target::Function(_) => continue, // A leaf, above.
                };
                let t = match self.index.get(&target_id) {
                    Some(&t) => t,
                    None => {
                        let target =
                            self.graph
                                .get(target_id)
                                .ok_or(InternError::DanglingRelocation {
                                    alloc: self.nodes[n as usize].id,
                                    offset: r.offset,
                                    target: target_id,
                                })?;
                        let t = self.add_node(target_id, target, &symbol_of);
                        queue.push_back(t);
                        t
                    }
                };
                let target = NodeTarget::Node(t);
                self.relocs.push(NodeReloc {
                    offset,
                    size,
                    addend,
                    target,
                });
            }
            let relocs = start..self.relocs.len() as u32;
            let chunks_start = self.chunks.len() as u32;
            let alloc = &self.nodes[n as usize].alloc;
            push_chunks(
                &mut self.chunks,
                alloc.bytes.len() as u64,
                &alloc.init,
                &self.relocs[relocs.start as usize..relocs.end as usize],
                relocs.start,
            );
            let node = &mut self.nodes[n as usize];
            node.relocs = relocs;
            node.chunks = chunks_start..self.chunks.len() as u32;
        }
        Ok(())
    }

    fn add_node(
        &mut self,
        id: G::Id,
        alloc: AllocRef<'g, G::Id>,
        symbol_of: &HashMap<G::Id, String>,
    ) -> u32 {
        let n = self.nodes.len() as u32;
        let symbol = if symbol_of.is_empty() {
            None
        } else {
            symbol_of.get(&id).cloned()
        };
        self.nodes.push(Node {
            id,
            alloc,
            symbol,
            relocs: 0..0,
            chunks: 0..0,
        });
        self.index.insert(id, n);
        n
    }

    /// Checks node `n`. Returns the indices of its relocations in offset
    /// order, or `None` if they are in offset order already.
    fn check(&self, n: usize) -> Result<Option<Vec<usize>>, InternError<G::Id>> {
        let Node { id, alloc, .. } = &self.nodes[n];
        let alloc_id = *id;
        if !alloc.align.is_power_of_two() {
            return Err(InternError::InvalidAlign {
                alloc: alloc_id,
                align: alloc.align,
            });
        }
        let len = alloc.bytes.len() as u64;
        if alloc.init.len() != len {
            return Err(InternError::InitMaskLength {
                alloc: alloc_id,
                bytes: len,
                mask: alloc.init.len(),
            });
        }
        let relocs = &alloc.relocations;
        let order = (!relocs.is_sorted_by_key(|r| r.offset)).then(|| {
            let mut order: Vec<usize> = (0..relocs.len()).collect();
            order.sort_by_key(|&k| relocs[k].offset);
            order
        });
        let ps = self.pointer_size;
        let mut previous: Option<(u64, u64)> = None;
        for j in 0..relocs.len() {
            let k = order.as_ref().map_or(j, |order| order[j]);
            let (offset, size) = (relocs[k].offset, relocs[k].size);
            if size != ps {
                return Err(InternError::RelocationSize {
                    alloc: alloc_id,
                    offset,
                    size,
                    pointer_size: ps,
                });
            }
            if !offset.is_multiple_of(ps) {
                return Err(InternError::MisalignedRelocation {
                    alloc: alloc_id,
                    offset,
                    pointer_size: ps,
                });
            }
            if offset.checked_add(size).is_none_or(|end| end > len) {
                return Err(InternError::RelocationOutOfBounds {
                    alloc: alloc_id,
                    offset,
                    size,
                    alloc_size: len,
                });
            }
            if let Some((prev, prev_end)) = previous
                && offset < prev_end
            {
                return Err(InternError::OverlappingRelocations {
                    alloc: alloc_id,
                    offset,
                    previous: prev,
                });
            }
            previous = Some((offset, offset + size));
        }
        Ok(order)
    }

    /// Pass 2: the least path from a static to each anonymous node, found
    /// breadth-first from the statics in symbol order, each node's
    /// relocations in offset order.
    fn find_owners(&mut self) {
        let n = self.nodes.len();
        self.parent = vec![None; n];
        self.owner = vec![None; n];
        let mut statics: Vec<u32> = (0..n as u32)
            .filter(|&i| !self.nodes[i as usize].is_anonymous())
            .collect();
        statics.sort_by(|&a, &b| {
            self.nodes[a as usize]
                .symbol
                .cmp(&self.nodes[b as usize].symbol)
        });
        let mut queue: VecDeque<u32> = VecDeque::new();
        for s in statics {
            self.owner[s as usize] = Some(s);
            queue.push_back(s);
        }
        while let Some(v) = queue.pop_front() {
            let range = self.nodes[v as usize].relocs.clone();
            for r in &self.relocs[range.start as usize..range.end as usize] {
                if let NodeTarget::Node(t) = r.target
                    && self.nodes[t as usize].is_anonymous()
                    && self.owner[t as usize].is_none()
                {
                    self.owner[t as usize] = self.owner[v as usize];
                    self.parent[t as usize] = Some((v, r.offset));
                    queue.push_back(t);
                }
            }
        }
    }

    /// Pass 3: content keys, bottom-up, without recursion.
    fn compute_keys(&mut self) -> Result<(), InternError<G::Id>> {
        #[derive(Clone, Copy, PartialEq)]
        enum State {
            New,
            OnStack,
            Done,
        }
        let n = self.nodes.len();
        self.content = vec![Key([0; 32]); n];
        self.identity = vec![Key([0; 32]); n];
        let mut state = vec![State::New; n];
        let mut stack: Vec<(usize, usize)> = Vec::new();
        for start in 0..n {
            if state[start] != State::New {
                continue;
            }
            state[start] = State::OnStack;
            stack.push((start, 0));
            while let Some(top) = stack.last_mut() {
                let (v, i) = *top;
                if let Some(r) = self.node_relocs(v).get(i) {
                    top.1 += 1;
                    let NodeTarget::Node(t) = r.target else {
                        continue;
                    };
                    let t = t as usize;
                    if !self.nodes[t].is_anonymous() {
                        continue; // A static is named by its symbol: no need to descend.
                    }
                    match state[t] {
                        State::New => {
                            state[t] = State::OnStack;
                            stack.push((t, 0));
                        }
                        State::OnStack => {
                            let from = stack.iter().position(|&(w, _)| w == t).unwrap_or(0);
                            let cycle = stack[from..]
                                .iter()
                                .map(|&(w, _)| self.nodes[w].id)
                                .collect();
                            return Err(InternError::AnonymousCycle { cycle });
                        }
                        State::Done => {}
                    }
                } else {
                    self.finish_key(v)?;
                    state[v] = State::Done;
                    stack.pop();
                }
            }
        }
        Ok(())
    }

    /// Hashes node `v`, whose anonymous targets all have keys.
    fn finish_key(&mut self, v: usize) -> Result<(), InternError<G::Id>> {
        let node = &self.nodes[v];
        let bytes = node.alloc.bytes;
        let chunks = self.node_chunks(v);
        let mut h = KeyHasher::content(node.alloc.align, bytes.len() as u64, chunks.len());
        for chunk in chunks {
            match chunk {
                RawChunk::Data(r) => h.data(&bytes[r.start as usize..r.end as usize]),
                RawChunk::Undef(r) => h.undef(r.end - r.start),
                RawChunk::Pointer(i) => {
                    let r = &self.relocs[*i as usize];
                    h.pointer(r.offset, r.size, r.addend, self.target_key(r.target));
                }
            }
        }
        let content = h.finish();
        self.content[v] = content;
        self.identity[v] = match (&node.symbol, node.alloc.mutability) {
            (None, Mutability::Mutable) => {
                let Some(owner) = self.owner[v] else {
                    return Err(InternError::MutableWithoutOwner { alloc: node.id });
                };
                let owner = self.nodes[owner as usize]
                    .symbol
                    .as_deref()
                    .unwrap_or_default();
                mutable_key(content, owner, &self.path(v))
            }
            _ => content,
        };
        Ok(())
    }

    fn target_key(&self, target: NodeTarget) -> TargetKey<'_> {
        match target {
            NodeTarget::Extern(e) => TargetKey::Static(&self.externs[e as usize]),
            NodeTarget::Function(f) => TargetKey::Function(&self.functions[f as usize]),
            NodeTarget::Node(t) => match self.group(t as usize) {
                Group::Static(symbol) => TargetKey::Static(symbol),
                Group::Constant(key) => TargetKey::Immutable(key),
                Group::Mutable(key) => TargetKey::Mutable(key),
            },
        }
    }

    /// What decides node `v`'s global (valid once its key is computed).
    fn group(&self, v: usize) -> Group<'_> {
        let node = &self.nodes[v];
        match (&node.symbol, node.alloc.mutability) {
            (Some(symbol), _) => Group::Static(symbol),
            (None, Mutability::Immutable) => Group::Constant(self.identity[v]),
            (None, Mutability::Mutable) => Group::Mutable(self.identity[v]),
        }
    }

    /// The relocation offsets from node `v`'s owner down to it.
    fn path(&self, mut v: usize) -> Vec<u64> {
        let mut path = Vec::new();
        while let Some((parent, offset)) = self.parent[v] {
            path.push(offset);
            v = parent as usize;
        }
        path.reverse();
        path
    }

    /// Pass 4: one global per group, in symbol order.
    fn into_interned(self) -> Interned<'g, G::Id> {
        // Sort the nodes by symbol, comparing a 16-byte prefix first so that
        // most comparisons touch no string. Nodes of one group end up
        // together; each run becomes one global, numbered in symbol order.
        let n = self.nodes.len();
        let mut order: Vec<(u128, u32)> = (0..n)
            .map(|v| (symbol_prefix(self.group(v)), v as u32))
            .collect();
        order.sort_unstable_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| cmp_symbols(self.group(a.1 as usize), self.group(b.1 as usize)))
        });
        let mut global_of = vec![GlobalId(0); n];
        let mut representative = vec![false; n];
        let mut count = 0u32;
        for (i, &(_, v)) in order.iter().enumerate() {
            let v = v as usize;
            let shares = i > 0 && self.group(order[i - 1].1 as usize) == self.group(v);
            if !shares {
                representative[v] = true;
                count += 1;
            }
            global_of[v] = GlobalId(count - 1);
        }
        // Build the globals in node order (which follows the graph walk, so
        // memory is read and written in order), and index them by rank.
        let mut symbols = String::with_capacity(count as usize * (SYMBOL_PREFIX.len() + 64));
        let mut chunks = Vec::with_capacity(self.chunks.len());
        let mut globals = Vec::with_capacity(count as usize);
        let mut records = vec![0u32; count as usize];
        for v in (0..n).filter(|&v| representative[v]) {
            records[global_of[v].index()] = globals.len() as u32;
            globals.push(self.global(v, &global_of, &mut symbols, &mut chunks));
        }
        let mut by_alloc: Vec<(G::Id, GlobalId)> = self
            .nodes
            .iter()
            .zip(&global_of)
            .map(|(node, &g)| (node.id, g))
            .collect();
        by_alloc.sort_unstable_by_key(|&(id, _)| id);
        Interned {
            pointer_size: self.pointer_size,
            globals,
            records,
            symbols,
            chunks,
            by_alloc,
        }
    }

    /// Appends the global that node `v` stands for to the arenas, and returns
    /// its record.
    fn global(
        &self,
        v: usize,
        global_of: &[GlobalId],
        symbols: &mut String,
        chunks: &mut Vec<Chunk<'g>>,
    ) -> GlobalData {
        let node = &self.nodes[v];
        let bytes = node.alloc.bytes;
        let symbol_start = symbols.len() as u32;
        push_symbol(symbols, self.group(v));
        let chunks_start = chunks.len() as u32;
        chunks.extend(self.node_chunks(v).iter().map(|c| match c {
            RawChunk::Data(r) => Chunk::Bytes {
                offset: r.start,
                bytes: &bytes[r.start as usize..r.end as usize],
            },
            RawChunk::Undef(r) => Chunk::Undef {
                offset: r.start,
                len: r.end - r.start,
            },
            RawChunk::Pointer(i) => {
                let r = &self.relocs[*i as usize];
                Chunk::Pointer(RelocSlot {
                    offset: r.offset,
                    size: r.size,
                    addend: r.addend,
                    target: match r.target {
                        NodeTarget::Node(t) => SlotTarget::Global(global_of[t as usize]),
                        NodeTarget::Extern(e) => {
                            SlotTarget::Extern(self.externs[e as usize].clone())
                        }
                        NodeTarget::Function(f) => {
                            SlotTarget::Function(self.functions[f as usize].clone())
                        }
                    },
                })
            }
        }));
        let kind = match (&node.symbol, node.alloc.mutability) {
            (Some(_), _) => GlobalKind::Static,
            (None, Mutability::Immutable) => GlobalKind::Constant,
            (None, Mutability::Mutable) => {
                let owner = self.owner[v]
                    .and_then(|o| self.nodes[o as usize].symbol.clone())
                    .unwrap_or_default();
                GlobalKind::MutableAnonymous {
                    owner,
                    path: self.path(v),
                }
            }
        };
        GlobalData {
            symbol: symbol_start..symbols.len() as u32,
            chunks: chunks_start..chunks.len() as u32,
            kind,
            key: self.content[v],
            align: node.alloc.align,
            size: bytes.len() as u64,
            mutability: node.alloc.mutability,
        }
    }
}

/// Appends an allocation's initializer pieces: the runs between relocations,
/// split where initialization changes, and the relocations (numbered from
/// `first`).
fn push_chunks(
    chunks: &mut Vec<RawChunk>,
    len: u64,
    init: &InitMask,
    relocs: &[NodeReloc],
    first: u32,
) {
    let gap = |chunks: &mut Vec<RawChunk>, range: Range<u64>| {
        for (run, is_init) in init.runs_in(range) {
            chunks.push(if is_init {
                RawChunk::Data(run)
            } else {
                RawChunk::Undef(run)
            });
        }
    };
    let mut pos = 0;
    for (i, r) in relocs.iter().enumerate() {
        gap(chunks, pos..r.offset);
        chunks.push(RawChunk::Pointer(first + i as u32));
        pos = r.offset + r.size;
    }
    gap(chunks, pos..len);
}

/// The number of `symbol` in `list` (indexed by `index`), adding it first
/// if new.
fn number(list: &mut Vec<String>, index: &mut HashMap<String, u32>, symbol: &str) -> u32 {
    let next = list.len() as u32;
    let n = *index.entry(symbol.to_owned()).or_insert(next);
    if n == next {
        list.push(symbol.to_owned());
    }
    n
}

mod symbols;
#[cfg(test)]
mod tests;
