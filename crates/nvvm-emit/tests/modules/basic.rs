//! Kernels, special registers, arithmetic and casts.

use device_ir::*;

use super::*;

/// `out[gid] = gid` with `gid = ctaid.x * ntid.x + tid.x`.
pub fn minimal_kernel() -> Module {
    let mut m = Module::new();
    let out = out_i32(&mut m);
    let i64t = m.types.i64();
    let k = kernel(&mut m, "minimal", &[out]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let p = params(&b)[0];
    let tid = b.special_reg(SpecialReg::TidX);
    let ctaid = b.special_reg(SpecialReg::CtaidX);
    let ntid = b.special_reg(SpecialReg::NtidX);
    let base = b.imul(ctaid, ntid);
    let gid = b.iadd(base, tid);
    let wide = b.cast(CastOp::ZExt, gid, i64t);
    let slot = b.gep(p, &[GepIndex::Value(wide)]);
    b.store(gid, slot);
    b.ret(None);
    m
}

/// Every special register, stored to `out[0..19]`.
pub fn special_registers() -> Module {
    let mut m = Module::new();
    let out = out_i32(&mut m);
    let k = kernel(&mut m, "sregs", &[out]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let p = params(&b)[0];
    for (i, reg) in SpecialReg::ALL.into_iter().enumerate() {
        let v = b.special_reg(reg);
        store_at(&mut b, p, i as i64, v);
    }
    b.ret(None);
    m
}

/// Every integer binary operator and comparison, at every width.
pub fn integer_arith() -> Module {
    let mut m = Module::new();
    let mut helpers = Vec::new();
    for bits in [8u16, 16, 32, 64, 128] {
        let t = m.types.int(bits);
        let f = device(
            &mut m,
            &format!("int_ops_i{bits}"),
            Linkage::Internal,
            &[t, t],
            Some(t),
        );
        let mut b = FunctionBuilder::new(&mut m, f);
        let ps = params(&b);
        let (x, y) = (ps[0], ps[1]);
        let one = b.iconst(t, 1);
        let safe_y = b.binary(BinaryOp::Or, y, one); // never zero
        let mask = b.iconst(t, i128::from(bits) - 1);
        let shift = b.binary(BinaryOp::And, y, mask); // below the width
        let mut acc = b.iconst(t, -3);
        for op in BinaryOp::ALL.into_iter().filter(|op| !op.is_float()) {
            let rhs = match op {
                BinaryOp::UDiv | BinaryOp::SDiv | BinaryOp::URem | BinaryOp::SRem => safe_y,
                BinaryOp::Shl | BinaryOp::LShr | BinaryOp::AShr => shift,
                _ => y,
            };
            let r = b.binary(op, x, rhs);
            acc = b.binary(BinaryOp::Xor, acc, r);
        }
        for cc in IntCC::ALL {
            let c = b.icmp(cc, x, y);
            let big = b.iconst(t, 0x5a);
            let sel = b.select(c, big, one);
            acc = b.iadd(acc, sel);
        }
        b.ret(Some(acc));
        helpers.push((bits, f, t));
    }
    // i1 logic.
    let i1t = m.types.i1();
    let logic = device(
        &mut m,
        "bool_ops",
        Linkage::Internal,
        &[i1t, i1t],
        Some(i1t),
    );
    {
        let mut b = FunctionBuilder::new(&mut m, logic);
        let ps = params(&b);
        let a = b.binary(BinaryOp::And, ps[0], ps[1]);
        let o = b.binary(BinaryOp::Or, ps[0], ps[1]);
        let x = b.binary(BinaryOp::Xor, a, o);
        let t = b.iconst(i1t, 1);
        let n = b.binary(BinaryOp::Xor, x, t);
        let e = b.icmp(IntCC::Eq, n, ps[0]);
        b.ret(Some(e));
    }
    let out = out_i32(&mut m);
    let i32t = m.types.i32();
    let k = kernel(&mut m, "integer_arith", &[out]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let p = params(&b)[0];
    let tid = b.special_reg(SpecialReg::TidX);
    for (i, (bits, f, t)) in helpers.into_iter().enumerate() {
        let x = if bits == 32 {
            tid
        } else if bits < 32 {
            b.cast(CastOp::Trunc, tid, t)
        } else {
            b.cast(CastOp::SExt, tid, t)
        };
        let y = b.iconst(t, -0x1234_5678_9abc);
        let r = b.call(f, &[x, y]).unwrap();
        let r32 = match bits {
            32 => r,
            b32 if b32 < 32 => b.cast(CastOp::ZExt, r, i32t),
            _ => b.cast(CastOp::Trunc, r, i32t),
        };
        store_at(&mut b, p, i as i64, r32);
    }
    let tb = b.cast(CastOp::Trunc, tid, i1t);
    let f = b.iconst(i1t, 0);
    let r = b.call(logic, &[tb, f]).unwrap();
    let r32 = b.cast(CastOp::ZExt, r, i32t);
    store_at(&mut b, p, 5, r32);
    b.ret(None);
    m
}

/// Every float operator and predicate, for f32 and f64, with special constants.
pub fn float_arith() -> Module {
    let mut m = Module::new();
    let mut helpers = Vec::new();
    for wide in [false, true] {
        let t = if wide { m.types.f64() } else { m.types.f32() };
        let name = if wide {
            "float_ops_f64"
        } else {
            "float_ops_f32"
        };
        let f = device(&mut m, name, Linkage::Internal, &[t, t], Some(t));
        let mut b = FunctionBuilder::new(&mut m, f);
        let ps = params(&b);
        let (x, y) = (ps[0], ps[1]);
        let consts: Vec<Value> = if wide {
            [1.5, -0.0, f64::INFINITY, f64::NAN, 5e-324, 0.1]
                .into_iter()
                .map(|c| b.f64const(c))
                .collect()
        } else {
            [
                1.5,
                -0.0,
                f32::INFINITY,
                f32::from_bits(0x7fc0_0001),
                1e-45,
                0.1,
            ]
            .into_iter()
            .map(|c| b.f32const(c))
            .collect()
        };
        let mut acc = consts[0];
        for op in BinaryOp::ALL.into_iter().filter(|op| op.is_float()) {
            let r = b.binary(op, x, y);
            acc = b.binary(BinaryOp::FAdd, acc, r);
        }
        for &c in &consts[1..] {
            acc = b.binary(BinaryOp::FMul, acc, c);
        }
        let neg = b.unary(UnaryOp::FNeg, acc);
        acc = neg;
        for cc in FloatCC::ALL {
            let c = b.fcmp(cc, x, acc);
            acc = b.select(c, acc, y);
        }
        b.ret(Some(acc));
        helpers.push((wide, f, t));
    }
    let f32t = m.types.f32();
    let f64t = m.types.f64();
    let out_f = m.types.ptr(f32t, AddressSpace::Global);
    let out_d = m.types.ptr(f64t, AddressSpace::Global);
    let k = kernel(&mut m, "float_arith", &[out_f, out_d]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let ps = params(&b);
    for (wide, f, t) in helpers {
        let x = b.load(t, if wide { ps[1] } else { ps[0] });
        let y = if wide {
            b.f64const(3.25)
        } else {
            b.f32const(3.25)
        };
        let r = b.call(f, &[x, y]).unwrap();
        let dst = if wide { ps[1] } else { ps[0] };
        store_at(&mut b, dst, 1, r);
    }
    b.ret(None);
    m
}

/// Every cast.
pub fn casts() -> Module {
    let mut m = Module::new();
    let t = &mut m.types;
    let (i1t, i8t, i16t, i32t, i64t) = (t.i1(), t.i8(), t.i16(), t.i32(), t.i64());
    let (f32t, f64t) = (t.f32(), t.f64());
    let in_p = t.ptr(i64t, AddressSpace::Global);
    let out_p = t.ptr(i64t, AddressSpace::Global);
    let k = kernel(&mut m, "casts", &[in_p, out_p]);
    let mut b = FunctionBuilder::new(&mut m, k);
    let ps = params(&b);
    let (input, out) = (ps[0], ps[1]);
    let x = b.load(i64t, input);
    // Integer narrowing and widening.
    let a32 = b.cast(CastOp::Trunc, x, i32t);
    let a16 = b.cast(CastOp::Trunc, a32, i16t);
    let a8 = b.cast(CastOp::Trunc, a16, i8t);
    let a1 = b.cast(CastOp::Trunc, a8, i1t);
    let z = b.cast(CastOp::ZExt, a1, i64t);
    let s8 = b.cast(CastOp::SExt, a8, i64t);
    let s16 = b.cast(CastOp::ZExt, a16, i64t);
    let mut acc = b.iadd(z, s8);
    acc = b.iadd(acc, s16);
    // Floats.
    let f = b.cast(CastOp::SiToFp, a32, f32t);
    let d = b.cast(CastOp::FpExt, f, f64t);
    let f2 = b.cast(CastOp::FpTrunc, d, f32t);
    let u = b.cast(CastOp::UiToFp, x, f64t);
    let i_from_f = b.cast(CastOp::FpToSi, f2, i64t);
    let u_from_d = b.cast(CastOp::FpToUi, u, i32t);
    let u_wide = b.cast(CastOp::ZExt, u_from_d, i64t);
    acc = b.iadd(acc, i_from_f);
    acc = b.iadd(acc, u_wide);
    // Bit reinterpretation.
    let fb = b.cast(CastOp::Bitcast, a32, f32t);
    let back = b.cast(CastOp::Bitcast, fb, i32t);
    let back64 = b.cast(CastOp::SExt, back, i64t);
    let db = b.cast(CastOp::Bitcast, x, f64t);
    let back_d = b.cast(CastOp::Bitcast, db, i64t);
    acc = b.binary(BinaryOp::Xor, acc, back64);
    acc = b.binary(BinaryOp::Xor, acc, back_d);
    // Pointers.
    let generic = b.addrspacecast(out, AddressSpace::Generic);
    let global = b.addrspacecast(generic, AddressSpace::Global);
    let as_i8 = b.ptr_bitcast(global, i8t);
    let addr = b.cast(CastOp::PtrToInt, as_i8, i64t);
    let addr32 = b.cast(CastOp::PtrToInt, generic, i32t);
    let addr32w = b.cast(CastOp::ZExt, addr32, i64t);
    let p_ty = b.types().ptr(i64t, AddressSpace::Global);
    let again = b.cast(CastOp::IntToPtr, addr, p_ty);
    acc = b.iadd(acc, addr32w);
    // A null generic pointer compares unequal to the output.
    let null = b.null(p_ty);
    let is_null = b.icmp(IntCC::Eq, again, null);
    let flag = b.cast(CastOp::ZExt, is_null, i64t);
    acc = b.iadd(acc, flag);
    b.store(acc, again);
    b.ret(None);
    m
}

/// Every float math function, in `f32` and `f64`, through libdevice: a device
/// function per width that folds all of them into one value.
pub fn math_functions() -> Module {
    let mut m = Module::new();
    let i32t = m.types.i32();
    for wide in [false, true] {
        let t = if wide { m.types.f64() } else { m.types.f32() };
        let name = if wide { "math_f64" } else { "math_f32" };
        let f = device(&mut m, name, Linkage::External, &[t, t, i32t], Some(t));
        let mut b = FunctionBuilder::new(&mut m, f);
        let ps = params(&b);
        let (x, y, n) = (ps[0], ps[1], ps[2]);
        let mut acc = x;
        for func in MathFn::ALL {
            let args: Vec<Value> = match func.arity() {
                1 => vec![acc],
                2 if func == MathFn::Powi => vec![acc, n],
                2 => vec![acc, y],
                _ => vec![acc, y, x],
            };
            acc = b.math(func, &args);
        }
        b.ret(Some(acc));
    }
    m
}

/// Every integer function at 8, 16, 32 and 64 bits through its LLVM
/// intrinsic: a device function per width that folds all of them into one
/// value (byte swaps only where the width has two bytes or more).
pub fn int_functions() -> Module {
    let mut m = Module::new();
    for bits in [8u16, 16, 32, 64] {
        let t = m.types.int(bits);
        let name = format!("int_i{bits}");
        let f = device(&mut m, &name, Linkage::External, &[t, t], Some(t));
        let mut b = FunctionBuilder::new(&mut m, f);
        let ps = params(&b);
        let (x, y) = (ps[0], ps[1]);
        let mut acc = x;
        for func in IntFn::ALL {
            if !func.accepts_width(u32::from(bits)) {
                continue;
            }
            let args: Vec<Value> = match func.arity() {
                1 => vec![acc],
                _ => vec![acc, y],
            };
            acc = b.int_fn(func, &args);
        }
        b.ret(Some(acc));
    }
    m
}
