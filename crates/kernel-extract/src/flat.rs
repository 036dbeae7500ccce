//! The kernel's control-flow graph with every call to a crate function inlined.
//!
//! Structuring works on one graph, not on a call tree: a construct that must
//! nest the rest of the thread's work (a spin loop, a bounds check that cannot
//! be decided) then nests the caller's continuation too. Each inlined call gets
//! a [`Frame`]: its body and an offset that makes its locals distinct from
//! every other frame's. A [`Node`] is one block of one frame.
//!
//! The analyses here are the textbook ones, on a graph of a few dozen nodes:
//! successors, the nodes that can reach the kernel's `return`, immediate
//! post-dominators, and natural loops found from the back edges of a
//! depth-first walk.

use std::collections::{BTreeMap, BTreeSet};

use cranelift_entity::EntityRef;
use mir_import::Crate;
use mir_import::model::{BasicBlock, Body, BodyId, Callee, Local, TerminatorKind};

use crate::ExtractError;

/// How deep inlining may nest; kernels do not recurse, so this only guards
/// against a cycle the recursion check missed.
const MAX_DEPTH: usize = 16;

/// An inlined instance of a function body.
#[derive(Clone, Debug)]
pub struct Frame {
    /// The body.
    pub body: BodyId,
    /// The function's def path, for messages.
    pub name: String,
    /// Added to a local's index to get its flat index.
    pub base: usize,
    /// For a callee: the call node, and the caller node that follows the call.
    pub caller: Option<(NodeId, Option<NodeId>)>,
}

/// A node's index in [`Flat::nodes`].
pub type NodeId = usize;

/// One block of one frame.
#[derive(Clone, Copy, Debug)]
pub struct Node {
    /// The frame.
    pub frame: usize,
    /// The block in that frame's body.
    pub bb: BasicBlock,
}

/// A natural loop.
#[derive(Clone, Debug)]
pub struct LoopInfo {
    /// Every node of the loop, the header included.
    pub body: BTreeSet<NodeId>,
}

/// The flattened graph.
#[derive(Debug)]
pub struct Flat<'k> {
    /// The imported crate.
    pub krate: &'k Crate,
    /// Every frame; frame 0 is the kernel.
    pub frames: Vec<Frame>,
    /// Every node.
    pub nodes: Vec<Node>,
    /// Successors of each node, in terminator order.
    pub succs: Vec<Vec<NodeId>>,
    /// For a node whose call was inlined: the callee's frame.
    pub inlined: BTreeMap<NodeId, usize>,
    /// The number of flat locals.
    pub n_locals: usize,
    /// Whether each node can reach the kernel's `return`.
    pub live: Vec<bool>,
    /// Immediate post-dominator of each node, when there is one.
    pub ipdom: Vec<Option<NodeId>>,
    /// Natural loops by header.
    pub loops: BTreeMap<NodeId, LoopInfo>,
    index: BTreeMap<(usize, BasicBlock), NodeId>,
}

impl<'k> Flat<'k> {
    /// Flattens the kernel body `root`, inlining every call to a function whose
    /// body the crate holds (and that is not a device-prelude intrinsic).
    ///
    /// # Errors
    /// Recursion, or inlining nested deeper than a kernel plausibly does.
    pub fn build(krate: &'k Crate, root: BodyId) -> Result<Flat<'k>, ExtractError> {
        let mut flat = Flat {
            krate,
            frames: Vec::new(),
            nodes: Vec::new(),
            succs: Vec::new(),
            inlined: BTreeMap::new(),
            n_locals: 0,
            live: Vec::new(),
            ipdom: Vec::new(),
            loops: BTreeMap::new(),
            index: BTreeMap::new(),
        };
        flat.add_frame(root, None, &mut Vec::new())?;
        flat.link();
        flat.live = flat.reaching_exit();
        flat.ipdom = flat.post_dominators();
        flat.loops = flat.natural_loops();
        Ok(flat)
    }

    /// The body of a frame.
    pub fn body(&self, frame: usize) -> &'k Body {
        &self.krate.bodies[self.frames[frame].body]
    }

    /// The flat index of a frame's local.
    pub fn local(&self, frame: usize, local: Local) -> usize {
        self.frames[frame].base + local.index()
    }

    /// The node of a frame's block.
    pub fn node(&self, frame: usize, bb: BasicBlock) -> NodeId {
        self.index[&(frame, bb)]
    }

    /// `function bbN`, for messages.
    pub fn describe(&self, node: NodeId) -> (String, String) {
        let n = self.nodes[node];
        (self.frames[n.frame].name.clone(), format!("{}", n.bb))
    }

    /// The crate function a call inlines, if it is one.
    pub fn inlinable(krate: &Crate, callee: &Callee) -> Option<BodyId> {
        let Callee::Item(path) = callee else {
            return None;
        };
        let def = path.def_path();
        if mir_import::prelude::intrinsic(&def).is_some() {
            return None;
        }
        krate.fn_body(&def)
    }

    fn add_frame(
        &mut self,
        body_id: BodyId,
        caller: Option<(NodeId, Option<NodeId>)>,
        stack: &mut Vec<BodyId>,
    ) -> Result<usize, ExtractError> {
        let body = &self.krate.bodies[body_id];
        super::handles::check(body)?;
        let name = body.path.def_path();
        if stack.contains(&body_id) {
            return Err(ExtractError::Recursion { function: name });
        }
        if stack.len() >= MAX_DEPTH {
            return Err(ExtractError::TooDeep { function: name });
        }
        let frame = self.frames.len();
        self.frames.push(Frame {
            body: body_id,
            name,
            base: self.n_locals,
            caller,
        });
        self.n_locals += body.locals.len();
        for (bb, _) in body.blocks.iter() {
            self.index.insert((frame, bb), self.nodes.len());
            self.nodes.push(Node { frame, bb });
        }
        stack.push(body_id);
        for (bb, block) in body.blocks.iter() {
            if let TerminatorKind::Call { func, target, .. } = &block.terminator.kind
                && let Some(callee) = Flat::inlinable(self.krate, func)
            {
                let at = self.index[&(frame, bb)];
                let after = target.map(|t| self.index[&(frame, t)]);
                let callee_frame = self.add_frame(callee, Some((at, after)), stack)?;
                self.inlined.insert(at, callee_frame);
            }
        }
        stack.pop();
        Ok(frame)
    }

    fn link(&mut self) {
        self.succs = vec![Vec::new(); self.nodes.len()];
        for id in 0..self.nodes.len() {
            let Node { frame, bb } = self.nodes[id];
            let term = &self.body(frame).blocks[bb].terminator.kind;
            let to = |b: &BasicBlock| self.index[&(frame, *b)];
            let succs: Vec<NodeId> = match term {
                TerminatorKind::Goto(t) => vec![to(t)],
                TerminatorKind::SwitchInt {
                    targets, otherwise, ..
                } => targets
                    .iter()
                    .map(|(_, t)| to(t))
                    .chain([to(otherwise)])
                    .collect(),
                TerminatorKind::Assert { target, .. } | TerminatorKind::Drop { target, .. } => {
                    vec![to(target)]
                }
                TerminatorKind::InlineAsm { target, .. } => target.iter().map(to).collect(),
                TerminatorKind::Call { target, .. } => match self.inlined.get(&id) {
                    Some(&callee) => vec![self.index[&(callee, BasicBlock::from_u32(0))]],
                    None => target.iter().map(to).collect(),
                },
                TerminatorKind::Return => match self.frames[frame].caller {
                    Some((_, Some(after))) => vec![after],
                    _ => Vec::new(),
                },
                TerminatorKind::Unreachable
                | TerminatorKind::UnwindResume
                | TerminatorKind::Terminate => Vec::new(),
            };
            self.succs[id] = succs;
        }
    }

    /// Whether the node ends the kernel (its frame-0 `return`).
    pub fn is_exit(&self, node: NodeId) -> bool {
        let n = self.nodes[node];
        n.frame == 0
            && matches!(
                self.body(0).blocks[n.bb].terminator.kind,
                TerminatorKind::Return
            )
    }

    fn reaching_exit(&self) -> Vec<bool> {
        let mut live: Vec<bool> = (0..self.nodes.len()).map(|n| self.is_exit(n)).collect();
        let mut changed = true;
        while changed {
            changed = false;
            for n in 0..self.nodes.len() {
                if !live[n] && self.succs[n].iter().any(|&s| live[s]) {
                    live[n] = true;
                    changed = true;
                }
            }
        }
        live
    }

    /// Post-dominator sets by the iterative data-flow equations. A node that
    /// cannot reach the exit (a panic) post-dominates as the universal set, so
    /// that a guard's immediate post-dominator is found through its live arm.
    fn post_dominators(&self) -> Vec<Option<NodeId>> {
        let n = self.nodes.len();
        let all: BTreeSet<NodeId> = (0..n).collect();
        let mut pdom: Vec<BTreeSet<NodeId>> = (0..n)
            .map(|i| {
                if self.is_exit(i) {
                    BTreeSet::from([i])
                } else {
                    all.clone()
                }
            })
            .collect();
        let mut changed = true;
        while changed {
            changed = false;
            for i in (0..n).rev() {
                if self.is_exit(i) || !self.live[i] {
                    continue;
                }
                let mut meet: Option<BTreeSet<NodeId>> = None;
                for &s in &self.succs[i] {
                    meet = Some(match meet {
                        None => pdom[s].clone(),
                        Some(m) => m.intersection(&pdom[s]).copied().collect(),
                    });
                }
                let mut next = meet.unwrap_or_default();
                next.insert(i);
                if next != pdom[i] {
                    pdom[i] = next;
                    changed = true;
                }
            }
        }
        // The immediate post-dominator is the strict post-dominator that every
        // other strict post-dominator post-dominates.
        (0..n)
            .map(|i| {
                if !self.live[i] {
                    return None;
                }
                let strict: Vec<NodeId> = pdom[i].iter().copied().filter(|&d| d != i).collect();
                strict
                    .iter()
                    .copied()
                    .find(|&d| strict.iter().all(|&o| pdom[d].contains(&o)))
            })
            .collect()
    }

    fn natural_loops(&self) -> BTreeMap<NodeId, LoopInfo> {
        let n = self.nodes.len();
        let mut back_edges = Vec::new();
        let mut state = vec![0u8; n]; // 0 new, 1 on stack, 2 done
        let mut stack: Vec<(NodeId, usize)> = vec![(0, 0)];
        state[0] = 1;
        while let Some(&mut (v, ref mut i)) = stack.last_mut() {
            if let Some(&s) = self.succs[v].get(*i) {
                *i += 1;
                match state[s] {
                    0 => {
                        state[s] = 1;
                        stack.push((s, 0));
                    }
                    1 => back_edges.push((v, s)),
                    _ => {}
                }
            } else {
                state[v] = 2;
                stack.pop();
            }
        }
        let mut preds = vec![Vec::new(); n];
        for (v, ss) in self.succs.iter().enumerate() {
            for &s in ss {
                preds[s].push(v);
            }
        }
        let mut loops: BTreeMap<NodeId, LoopInfo> = BTreeMap::new();
        for (latch, header) in back_edges {
            let info = loops.entry(header).or_insert_with(|| LoopInfo {
                body: BTreeSet::from([header]),
            });
            let mut work = vec![latch];
            while let Some(v) = work.pop() {
                if info.body.insert(v) {
                    work.extend(preds[v].iter().copied());
                }
            }
        }
        loops
    }
}
