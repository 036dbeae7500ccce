//! The builder: appends instructions to a function body, assigning result types.
//!
//! The builder does not check types; the verifier does. Result types follow from
//! the operands where that is total (a binary operation has its left operand's
//! type) and are given explicitly otherwise (loads, casts, constants).

use crate::entities::{Block, FuncId, GlobalId, Inst, Ty, Value};
use crate::function::{BlockData, Body, FuncAttrs, ValueData, ValueDef};
use crate::instructions::{
    BinaryOp, BlockCall, CastOp, FloatCC, GepIndex, InstData, IntCC, IntFn, MatchMode, MathFn,
    MemFlags, Ordering, ReduceOp, RmwOp, Scope, ShuffleMode, SpecialReg, UnaryOp, VoteMode,
};
use crate::layout;
use crate::module::Module;
use crate::types::{AddressSpace, TyKind, Types};

/// Builds the body of one function of a module.
///
/// ```
/// use device_ir::*;
/// let mut m = Module::new();
/// let i32t = m.types.i32();
/// let out = m.types.ptr(i32t, AddressSpace::Global);
/// let k = m.declare_function("k", FunctionKind::Kernel, Linkage::External,
///                            Signature::new(&[out], None));
/// let mut b = FunctionBuilder::new(&mut m, k);
/// let p = b.block_params(b.entry_block())[0];
/// let tid = b.special_reg(SpecialReg::TidX);
/// b.store(tid, p);
/// b.ret(None);
/// assert!(verify(&m).is_ok());
/// ```
pub struct FunctionBuilder<'m> {
    module: &'m mut Module,
    func: FuncId,
    current: Option<Block>,
}

impl<'m> FunctionBuilder<'m> {
    /// Starts building `func`'s body, positioned at the end of its entry block. If
    /// the function has no body yet, one is created with an entry block whose
    /// parameters are the signature's.
    ///
    /// # Panics
    /// If `func` is not a function of `module`.
    pub fn new(module: &'m mut Module, func: FuncId) -> Self {
        let data = &mut module.functions[func];
        if data.body.is_none() {
            let mut body = Body::default();
            let entry = body.blocks.push(BlockData::default());
            for (i, &ty) in data.sig.params.iter().enumerate() {
                let v = body.values.push(ValueData {
                    ty,
                    def: ValueDef::Param(entry, i as u32),
                });
                body.blocks[entry].params.push(v);
            }
            data.body = Some(body);
        }
        let mut b = FunctionBuilder {
            module,
            func,
            current: None,
        };
        let entry = b.entry_block();
        b.current = Some(entry);
        b
    }

    /// The module being built.
    pub fn module(&mut self) -> &mut Module {
        self.module
    }

    /// The module's type table.
    pub fn types(&mut self) -> &mut Types {
        &mut self.module.types
    }

    /// The function being built.
    pub fn func(&self) -> FuncId {
        self.func
    }

    fn body(&mut self) -> &mut Body {
        match &mut self.module.functions[self.func].body {
            Some(body) => body,
            None => unreachable!("FunctionBuilder::new creates the body"),
        }
    }

    fn body_ref(&self) -> &Body {
        match &self.module.functions[self.func].body {
            Some(body) => body,
            None => unreachable!("FunctionBuilder::new creates the body"),
        }
    }

    /// The body built so far (to look at, not to change).
    pub fn body_so_far(&self) -> &Body {
        self.body_ref()
    }

    /// Adds attributes to the function.
    pub fn add_attrs(&mut self, attrs: FuncAttrs) {
        self.module.functions[self.func].attrs |= attrs;
    }

    /// The entry block.
    pub fn entry_block(&self) -> Block {
        self.body_ref().entry()
    }

    /// A new, empty block after the existing ones.
    pub fn create_block(&mut self) -> Block {
        self.body().blocks.push(BlockData::default())
    }

    /// Appends a parameter of type `ty` to `block`.
    pub fn append_block_param(&mut self, block: Block, ty: Ty) -> Value {
        let body = self.body();
        let n = body.blocks[block].params.len() as u32;
        let v = body.values.push(ValueData {
            ty,
            def: ValueDef::Param(block, n),
        });
        body.blocks[block].params.push(v);
        v
    }

    /// The parameters of `block`.
    pub fn block_params(&self, block: Block) -> Vec<Value> {
        self.body_ref().blocks[block].params.clone()
    }

    /// Continues appending at the end of `block`.
    pub fn switch_to_block(&mut self, block: Block) {
        self.current = Some(block);
    }

    /// The block being appended to.
    pub fn current_block(&self) -> Option<Block> {
        self.current
    }

    /// The type of `value`.
    pub fn value_ty(&self, value: Value) -> Ty {
        self.body_ref().values[value].ty
    }

    /// Appends `data` to the current block, with a result of type `result` if given.
    ///
    /// # Panics
    /// If there is no current block.
    pub fn ins(&mut self, data: InstData, result: Option<Ty>) -> (Inst, Option<Value>) {
        let block = self.current.expect("FunctionBuilder: no current block");
        let body = self.body();
        let inst = body.insts.push(data);
        body.blocks[block].insts.push(inst);
        let value = result.map(|ty| {
            let v = body.values.push(ValueData {
                ty,
                def: ValueDef::Result(inst),
            });
            body.results[inst] = v.into();
            v
        });
        (inst, value)
    }

    fn ins_value(&mut self, data: InstData, ty: Ty) -> Value {
        match self.ins(data, Some(ty)).1 {
            Some(v) => v,
            None => unreachable!("a result type was given"),
        }
    }

    fn ins_effect(&mut self, data: InstData) -> Inst {
        self.ins(data, None).0
    }

    // ----- constants

    /// An integer constant of type `ty`; `imm` is truncated to the type's width.
    pub fn iconst(&mut self, ty: Ty, imm: i128) -> Value {
        let bits = self.module.types.int_bits(ty).unwrap_or(128);
        let imm = imm as u128;
        let imm = if bits >= 128 {
            imm
        } else {
            imm & ((1u128 << bits) - 1)
        };
        self.ins_value(InstData::Iconst { ty, imm }, ty)
    }

    /// An `f32` constant.
    pub fn f32const(&mut self, value: f32) -> Value {
        let ty = self.module.types.f32();
        self.ins_value(
            InstData::Fconst {
                ty,
                bits: u64::from(value.to_bits()),
            },
            ty,
        )
    }

    /// An `f64` constant.
    pub fn f64const(&mut self, value: f64) -> Value {
        let ty = self.module.types.f64();
        self.ins_value(
            InstData::Fconst {
                ty,
                bits: value.to_bits(),
            },
            ty,
        )
    }

    /// The null pointer of pointer type `ty`.
    pub fn null(&mut self, ty: Ty) -> Value {
        self.ins_value(InstData::Null { ty }, ty)
    }

    /// An undefined value of `ty`.
    pub fn undef(&mut self, ty: Ty) -> Value {
        self.ins_value(InstData::Undef { ty }, ty)
    }

    /// The address of `global` viewed as a pointer to `pointee`, in the global's own
    /// address space.
    pub fn global_addr(&mut self, global: GlobalId, pointee: Ty) -> Value {
        let space = self
            .module
            .globals
            .get(global)
            .map_or(AddressSpace::Global, |g| g.space);
        let ty = self.module.types.ptr(pointee, space);
        self.ins_value(InstData::GlobalAddr { global, ty }, ty)
    }

    /// The address of function `func` as a generic pointer to `pointee`.
    pub fn func_addr(&mut self, func: FuncId, pointee: Ty) -> Value {
        let ty = self.module.types.ptr(pointee, AddressSpace::Generic);
        self.ins_value(InstData::FuncAddr { func, ty }, ty)
    }

    // ----- memory

    /// A stack slot for one `ty` at its natural alignment; yields a generic pointer.
    pub fn alloca(&mut self, ty: Ty) -> Value {
        let align = layout::align_of(&self.module.types, ty) as u32;
        self.alloca_aligned(ty, align)
    }

    /// A stack slot for one `ty` at alignment `align`; yields a generic pointer.
    pub fn alloca_aligned(&mut self, ty: Ty, align: u32) -> Value {
        let ptr = self.module.types.ptr(ty, AddressSpace::Generic);
        self.ins_value(InstData::Alloca { ty, align }, ptr)
    }

    /// Loads a `ty` through `ptr` at `ty`'s natural alignment.
    pub fn load(&mut self, ty: Ty, ptr: Value) -> Value {
        let align = layout::align_of(&self.module.types, ty) as u32;
        self.load_with(ty, ptr, align, MemFlags::empty())
    }

    /// Loads a `ty` through `ptr` with an explicit alignment and flags.
    pub fn load_with(&mut self, ty: Ty, ptr: Value, align: u32, flags: MemFlags) -> Value {
        self.ins_value(
            InstData::Load {
                ty,
                ptr,
                align,
                flags,
            },
            ty,
        )
    }

    /// Stores `value` through `ptr` at the value type's natural alignment.
    pub fn store(&mut self, value: Value, ptr: Value) -> Inst {
        let ty = self.value_ty(value);
        let align = layout::align_of(&self.module.types, ty) as u32;
        self.store_with(value, ptr, align, MemFlags::empty())
    }

    /// Stores `value` through `ptr` with an explicit alignment and flags.
    pub fn store_with(&mut self, value: Value, ptr: Value, align: u32, flags: MemFlags) -> Inst {
        self.ins_effect(InstData::Store {
            ptr,
            value,
            align,
            flags,
        })
    }

    /// Typed address arithmetic. The result type is computed from `base`'s pointee;
    /// if the indices do not fit it, the result is typed as `base` and the verifier
    /// reports the mismatch.
    pub fn gep(&mut self, base: Value, indices: &[GepIndex]) -> Value {
        let base_ty = self.value_ty(base);
        let ty = self.gep_result_ty(base_ty, indices).unwrap_or(base_ty);
        self.ins_value(
            InstData::Gep {
                base,
                indices: indices.to_vec(),
            },
            ty,
        )
    }

    fn gep_result_ty(&mut self, base_ty: Ty, indices: &[GepIndex]) -> Option<Ty> {
        let types = &self.module.types;
        let (pointee, space) = types.ptr_parts(base_ty)?;
        let steps: Vec<Option<u32>> = indices
            .iter()
            .skip(1)
            .map(|i| match i {
                GepIndex::Field(f) => Some(*f),
                _ => None,
            })
            .collect();
        let (reached, _) = layout::gep_path(types, pointee, &steps).ok()?;
        Some(self.module.types.ptr(reached, space))
    }

    /// `base` plus `offset` bytes (an `i64`), keeping `base`'s type.
    pub fn byte_offset(&mut self, base: Value, offset: Value) -> Value {
        let ty = self.value_ty(base);
        self.ins_value(InstData::ByteOffset { base, offset }, ty)
    }

    // ----- casts

    /// Converts `value` to `ty` with `op`.
    pub fn cast(&mut self, op: CastOp, value: Value, ty: Ty) -> Value {
        self.ins_value(InstData::Cast { op, value, ty }, ty)
    }

    /// Casts pointer `value` to the same pointee in `space`.
    pub fn addrspacecast(&mut self, value: Value, space: AddressSpace) -> Value {
        let from = self.value_ty(value);
        let pointee = match self.module.types.get(from) {
            Some(TyKind::Ptr { pointee, .. }) => *pointee,
            _ => from,
        };
        let ty = self.module.types.ptr(pointee, space);
        self.cast(CastOp::AddrSpaceCast, value, ty)
    }

    /// Re-types pointer `value` to point to `pointee`, in the same space.
    pub fn ptr_bitcast(&mut self, value: Value, pointee: Ty) -> Value {
        let from = self.value_ty(value);
        let space = self
            .module
            .types
            .ptr_parts(from)
            .map_or(AddressSpace::Generic, |(_, space)| space);
        let ty = self.module.types.ptr(pointee, space);
        self.cast(CastOp::Bitcast, value, ty)
    }

    // ----- arithmetic

    /// `lhs op rhs`, typed as `lhs`.
    pub fn binary(&mut self, op: BinaryOp, lhs: Value, rhs: Value) -> Value {
        let ty = self.value_ty(lhs);
        self.ins_value(InstData::Binary { op, lhs, rhs }, ty)
    }

    /// Wrapping integer addition.
    pub fn iadd(&mut self, lhs: Value, rhs: Value) -> Value {
        self.binary(BinaryOp::Add, lhs, rhs)
    }

    /// Wrapping integer multiplication.
    pub fn imul(&mut self, lhs: Value, rhs: Value) -> Value {
        self.binary(BinaryOp::Mul, lhs, rhs)
    }

    /// `op value`, typed as `value`.
    pub fn unary(&mut self, op: UnaryOp, value: Value) -> Value {
        let ty = self.value_ty(value);
        self.ins_value(InstData::Unary { op, value }, ty)
    }

    /// An integer or pointer comparison; yields an `i1`.
    pub fn icmp(&mut self, cond: IntCC, lhs: Value, rhs: Value) -> Value {
        let ty = self.module.types.i1();
        self.ins_value(InstData::Icmp { cond, lhs, rhs }, ty)
    }

    /// A float comparison; yields an `i1`.
    pub fn fcmp(&mut self, cond: FloatCC, lhs: Value, rhs: Value) -> Value {
        let ty = self.module.types.i1();
        self.ins_value(InstData::Fcmp { cond, lhs, rhs }, ty)
    }

    /// `cond ? if_true : if_false`, typed as `if_true`.
    pub fn select(&mut self, cond: Value, if_true: Value, if_false: Value) -> Value {
        let ty = self.value_ty(if_true);
        self.ins_value(
            InstData::Select {
                cond,
                if_true,
                if_false,
            },
            ty,
        )
    }

    /// Calls `func`; yields its result if its signature has one.
    pub fn call(&mut self, func: FuncId, args: &[Value]) -> Option<Value> {
        let ret = self.module.functions.get(func).and_then(|f| f.sig.ret);
        self.ins(
            InstData::Call {
                func,
                args: args.to_vec(),
            },
            ret,
        )
        .1
    }

    /// Calls the function at address `callee` as one of signature `sig`;
    /// yields its result if `sig` has one.
    pub fn call_indirect(
        &mut self,
        callee: Value,
        sig: crate::Signature,
        args: &[Value],
    ) -> Option<Value> {
        let ret = sig.ret;
        self.ins(
            InstData::CallIndirect {
                callee,
                sig,
                args: args.to_vec(),
            },
            ret,
        )
        .1
    }

    // ----- terminators

    /// Branches to `block` with `args`.
    pub fn jump(&mut self, block: Block, args: &[Value]) -> Inst {
        self.ins_effect(InstData::Jump {
            dest: BlockCall::new(block, args),
        })
    }

    /// Branches on `cond` (an `i1`).
    pub fn brif(
        &mut self,
        cond: Value,
        then_block: Block,
        then_args: &[Value],
        else_block: Block,
        else_args: &[Value],
    ) -> Inst {
        self.ins_effect(InstData::Brif {
            cond,
            then_dest: BlockCall::new(then_block, then_args),
            else_dest: BlockCall::new(else_block, else_args),
        })
    }

    /// A multi-way branch on integer `value`.
    pub fn switch(
        &mut self,
        value: Value,
        default: BlockCall,
        cases: Vec<(u128, BlockCall)>,
    ) -> Inst {
        self.ins_effect(InstData::Switch {
            value,
            default,
            cases,
        })
    }

    /// Returns, with `value` if the function has a return type.
    pub fn ret(&mut self, value: Option<Value>) -> Inst {
        self.ins_effect(InstData::Return { value })
    }

    /// Marks the current point unreachable.
    pub fn unreachable(&mut self) -> Inst {
        self.ins_effect(InstData::Unreachable)
    }

    // ----- GPU

    /// Reads a special register; yields an `i32`.
    pub fn special_reg(&mut self, reg: SpecialReg) -> Value {
        let ty = self.module.types.i32();
        self.ins_value(InstData::SpecialReg { reg }, ty)
    }

    /// A block-wide barrier (`__syncthreads`).
    pub fn barrier(&mut self) -> Inst {
        self.ins_effect(InstData::Barrier)
    }

    /// A float math function; yields a value of its first operand's type.
    pub fn math(&mut self, func: MathFn, args: &[Value]) -> Value {
        let ty = match args.first() {
            Some(&a) => self.value_ty(a),
            None => self.module.types.f32(),
        };
        self.ins_value(
            InstData::Math {
                func,
                args: args.to_vec(),
            },
            ty,
        )
    }

    /// An integer function; yields a value of its first operand's type.
    pub fn int_fn(&mut self, func: IntFn, args: &[Value]) -> Value {
        let ty = match args.first() {
            Some(&a) => self.value_ty(a),
            None => self.module.types.i32(),
        };
        self.ins_value(
            InstData::IntFn {
                func,
                args: args.to_vec(),
            },
            ty,
        )
    }

    /// A warp shuffle of the `i32` `value` over the full warp; yields an
    /// `i32`.
    pub fn shuffle(&mut self, mode: ShuffleMode, mask: Value, value: Value, lane: Value) -> Value {
        self.shuffle_with_clamp(mode, mask, value, lane, None)
    }

    /// A warp shuffle with PTX's `c` operand `clamp` (segments and clamp;
    /// `None` for the full warp); yields an `i32`.
    pub fn shuffle_with_clamp(
        &mut self,
        mode: ShuffleMode,
        mask: Value,
        value: Value,
        lane: Value,
        clamp: Option<Value>,
    ) -> Value {
        let ty = self.module.types.i32();
        self.ins_value(
            InstData::Shuffle {
                mode,
                mask,
                value,
                lane,
                clamp,
            },
            ty,
        )
    }

    /// A warp vote on the `i1` `pred`: an `i1` for all/any, an `i32` ballot.
    pub fn vote(&mut self, mode: VoteMode, mask: Value, pred: Value) -> Value {
        let ty = match mode {
            VoteMode::Ballot => self.module.types.i32(),
            VoteMode::All | VoteMode::Any => self.module.types.i1(),
        };
        self.ins_value(InstData::Vote { mode, mask, pred }, ty)
    }

    /// A warp reduction of the `i32` `value`; yields an `i32`.
    pub fn warp_reduce(&mut self, op: ReduceOp, mask: Value, value: Value) -> Value {
        let ty = self.module.types.i32();
        self.ins_value(InstData::WarpReduce { op, mask, value }, ty)
    }

    /// A warp match of the `i32` or `i64` `value`; yields an `i32` lane mask.
    pub fn warp_match(&mut self, mode: MatchMode, mask: Value, value: Value) -> Value {
        let ty = self.module.types.i32();
        self.ins_value(InstData::WarpMatch { mode, mask, value }, ty)
    }

    /// `__syncwarp(mask)`.
    pub fn warp_sync(&mut self, mask: Value) -> Inst {
        self.ins_effect(InstData::WarpSync { mask })
    }

    /// The start of the block's dynamic shared memory, aligned to `align`;
    /// yields an `i8 addrspace(3)*`.
    pub fn dynamic_shared(&mut self, align: u32) -> Value {
        let i8t = self.module.types.i8();
        let ty = self.module.types.ptr(i8t, crate::AddressSpace::Shared);
        self.ins_value(InstData::DynamicShared { align }, ty)
    }

    /// `__activemask()`; yields an `i32`.
    pub fn active_mask(&mut self) -> Value {
        let ty = self.module.types.i32();
        self.ins_value(InstData::ActiveMask, ty)
    }

    /// An atomic load of `ty`.
    pub fn atomic_load(&mut self, ty: Ty, ptr: Value, ordering: Ordering, scope: Scope) -> Value {
        self.ins_value(
            InstData::AtomicLoad {
                ty,
                ptr,
                ordering,
                scope,
            },
            ty,
        )
    }

    /// An atomic store.
    pub fn atomic_store(
        &mut self,
        value: Value,
        ptr: Value,
        ordering: Ordering,
        scope: Scope,
    ) -> Inst {
        self.ins_effect(InstData::AtomicStore {
            ptr,
            value,
            ordering,
            scope,
        })
    }

    /// An atomic read-modify-write; yields the old value, typed as `value`.
    pub fn atomic_rmw(
        &mut self,
        op: RmwOp,
        ptr: Value,
        value: Value,
        ordering: Ordering,
        scope: Scope,
    ) -> Value {
        let ty = self.value_ty(value);
        self.ins_value(
            InstData::AtomicRmw {
                op,
                ptr,
                value,
                ordering,
                scope,
            },
            ty,
        )
    }

    /// An atomic compare-and-swap; yields the old value, typed as `expected`.
    pub fn atomic_cas(
        &mut self,
        ptr: Value,
        expected: Value,
        new: Value,
        ordering: Ordering,
        scope: Scope,
    ) -> Value {
        let ty = self.value_ty(expected);
        self.ins_value(
            InstData::AtomicCas {
                ptr,
                expected,
                new,
                ordering,
                scope,
            },
            ty,
        )
    }

    /// A memory fence.
    pub fn fence(&mut self, ordering: Ordering, scope: Scope) -> Inst {
        self.ins_effect(InstData::Fence { ordering, scope })
    }

    /// Inline PTX; yields a value of `ret` if given.
    pub fn inline_asm(
        &mut self,
        template: &str,
        constraints: &str,
        args: &[Value],
        ret: Option<Ty>,
        side_effects: bool,
    ) -> Option<Value> {
        let data = InstData::InlineAsm {
            template: template.to_owned(),
            constraints: constraints.to_owned(),
            args: args.to_vec(),
            ret,
            side_effects,
        };
        self.ins(data, ret).1
    }
}
