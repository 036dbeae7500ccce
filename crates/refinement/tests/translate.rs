//! The PTX translation on hand-written PTX (no libNVVM needed): what it
//! makes of a spin loop and a barrier, and how it refuses what it does not
//! translate, naming the thread, the PTX line and the reason.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use ptx_litmus::syntax::{Instr, Order, Scope};
use refinement::launch::{Launch, Param};
use refinement::translate::translate;

fn launch(threads: u32, params: Vec<Param>) -> Launch {
    Launch {
        fixture: "handwritten".into(),
        kernel: "k".into(),
        threads,
        ctas: 1,
        params,
    }
}

fn buffer(name: &str, len: usize) -> Param {
    Param::Buffer {
        name: name.into(),
        init: vec![0; len],
        read_only: false,
    }
}

const HEADER: &str = ".version 8.8\n.target sm_90\n.address_size 64\n";

fn module(body: &str) -> ptx_reader::Module {
    ptx_reader::parse(&format!("{HEADER}{body}")).expect("the test PTX reads")
}

/// Thread 0 waits for `flag` with an acquire load in a loop, then copies `data`.
const SPIN: &str = r#"
.visible .entry k(
	.param .u64 k_param_0,
	.param .u64 k_param_1
)
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<4>;
	.reg .b64 	%rd<3>;

	ld.param.u64 	%rd1, [k_param_0];
	ld.param.u64 	%rd2, [k_param_1];
	mov.u32 	%r1, %tid.x;
	setp.ne.s32 	%p1, %r1, 0;
	@%p1 bra 	$L__BB0_3;
$L__BB0_1:
	ld.acquire.gpu.u32 %r2, [%rd1];
	setp.eq.s32 	%p2, %r2, 0;
	@%p2 bra 	$L__BB0_1;
	ld.global.u32 	%r3, [%rd2+4];
	st.global.u32 	[%rd2], %r3;
$L__BB0_3:
	ret;
}
"#;

#[test]
fn a_spin_loop_becomes_a_backward_jump_and_idle_threads_have_no_events() {
    let l = launch(2, vec![buffer("flag", 1), buffer("data", 2)]);
    let t = translate(&module(SPIN), "k", &l).expect("translates");
    assert_eq!(t.test.threads.len(), 2);
    let code = &t.test.threads[0].code;
    let acquire = code.iter().filter(|l| {
        matches!(
            l.instr,
            Instr::Load {
                order: Order::Acquire,
                scope: Some(Scope::Gpu),
                ..
            }
        )
    });
    // The first iteration is peeled: at the loop head's second visit `%r2`
    // holds a loaded value, at its first it holds nothing; from the second
    // on the state repeats and the loop closes.
    assert_eq!(
        acquire.count(),
        2,
        "the peeled iteration and the loop: {code:#?}"
    );
    // The loop's branch targets a label placed before it.
    let mark = |label| code.iter().position(|l| l.instr == Instr::Mark(label));
    let back = code.iter().enumerate().any(|(i, l)| match l.instr {
        Instr::Branch { target, .. } => mark(target).is_some_and(|m| m < i),
        _ => false,
    });
    assert!(back, "no backward branch: {code:#?}");
    // Thread 1 skips everything: no memory instruction at all.
    let idle = &t.test.threads[1].code;
    assert!(
        idle.iter()
            .all(|l| !matches!(l.instr, Instr::Load { .. } | Instr::Store { .. })),
        "{idle:#?}"
    );
    // Locations are the buffers' elements, all observed.
    let names: Vec<&str> = t.test.locations.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["flag[0]", "data[0]", "data[1]"]);
    assert_eq!(t.observed.len(), 3);
}

#[test]
fn a_fence_is_refused_with_its_line() {
    let ptx = SPIN.replace(
        "\tst.global.u32 \t[%rd2], %r3;",
        "\tfence.sc.gpu;\n\tst.global.u32 \t[%rd2], %r3;",
    );
    let l = launch(1, vec![buffer("flag", 1), buffer("data", 2)]);
    let err = translate(&module(&ptx), "k", &l).expect_err("fences are not translated");
    let text = err.to_string();
    assert!(text.contains("fence.sc.gpu"), "{text}");
    assert!(text.contains("thread 0.0"), "{text}");
    assert!(text.contains("fences are not translated"), "{text}");
    assert!(err.0.line > 0, "{err:?}");
}

#[test]
fn an_access_outside_the_buffers_is_refused() {
    let ptx = SPIN.replace("[%rd2+4]", "[%rd2+8]");
    let l = launch(1, vec![buffer("flag", 1), buffer("data", 2)]);
    let err = translate(&module(&ptx), "k", &l).expect_err("byte 8 of a 2-element buffer");
    assert!(
        err.to_string().contains("outside the launch's buffers"),
        "{err}"
    );
}

#[test]
fn a_launch_that_does_not_match_the_entry_is_refused() {
    let l = launch(1, vec![buffer("flag", 1)]);
    let err = translate(&module(SPIN), "k", &l).expect_err("two parameters, one described");
    assert!(
        err.to_string()
            .contains("the entry has 2 parameters, the launch describes 1"),
        "{err}"
    );
    let err = translate(&module(SPIN), "nope", &l).expect_err("no such entry");
    assert!(err.to_string().contains("no such .entry"), "{err}");
}

#[test]
fn a_write_to_a_read_only_input_is_refused() {
    let l = launch(
        1,
        vec![
            buffer("flag", 1),
            Param::Buffer {
                name: "data".into(),
                init: vec![5, 6],
                read_only: true,
            },
        ],
    );
    let err = translate(&module(SPIN), "k", &l).expect_err("data is written");
    assert!(err.to_string().contains("read-only"), "{err}");
}

/// Thread 0 branches on a loaded value and stores either 1 or 2, so the code
/// after the join (its store and its barrier) is written twice, once per
/// known value; thread 1 reads the store after its barrier.
const BARRIER_AFTER_A_BRANCH: &str = r#"
.visible .entry k(
	.param .u64 k_param_0,
	.param .u64 k_param_1
)
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<5>;
	.reg .b64 	%rd<3>;

	ld.param.u64 	%rd1, [k_param_0];
	ld.param.u64 	%rd2, [k_param_1];
	mov.u32 	%r1, %tid.x;
	setp.ne.s32 	%p1, %r1, 0;
	@%p1 bra 	$L__BB0_4;
	ld.global.u32 	%r2, [%rd1];
	setp.eq.s32 	%p2, %r2, 0;
	@%p2 bra 	$L__BB0_2;
	mov.u32 	%r3, 1;
	bra.uni 	$L__BB0_3;
$L__BB0_2:
	mov.u32 	%r3, 2;
$L__BB0_3:
	st.global.u32 	[%rd2], %r3;
	bar.sync 	0;
	ret;
$L__BB0_4:
	bar.sync 	0;
	ld.global.u32 	%r4, [%rd2];
	st.global.u32 	[%rd2+4], %r4;
	ret;
}
"#;

#[test]
fn a_barrier_written_on_two_paths_is_one_barrier_by_count() {
    use ptx_litmus::explore::{BarrierMatching, Exploration, outcomes_until};
    use ptx_litmus::{Deadline, Options};
    let l = launch(2, vec![buffer("flag", 1), buffer("data", 2)]);
    let t = translate(&module(BARRIER_AFTER_A_BRANCH), "k", &l).expect("translates");
    let bars = t.test.threads[0]
        .code
        .iter()
        .filter(|l| matches!(l.instr, Instr::Barrier { instance: 1, .. }))
        .count();
    assert_eq!(bars, 2, "the first barrier on both paths");
    let run = |barriers| {
        let exploration = Exploration {
            observe: Some(&t.observed),
            barriers,
            stop: &|_| false,
        };
        outcomes_until(
            &t.test,
            &Options::default(),
            &exploration,
            &Deadline::none(),
        )
        .expect("explores")
    };
    let by_count = run(BarrierMatching::ByCount);
    let outcomes: Vec<_> = by_count.outcomes.keys().collect();
    assert_eq!(outcomes.len(), 1, "{by_count}");
    assert_eq!(outcomes[0]["data[1]"], 2, "{by_count}");
    // Read as litmus instructions, the untaken path's barrier is never
    // reached and thread 1 waits for it forever.
    let by_instruction = run(BarrierMatching::ByInstruction);
    assert!(
        by_instruction.outcomes.is_empty() && by_instruction.blocked > 0,
        "{by_instruction}"
    );
}

#[test]
fn an_instruction_missing_an_operand_is_refused_not_a_panic() {
    let ptx = SPIN.replace("st.global.u32 \t[%rd2], %r3;", "st.global.u32 \t[%rd2];");
    assert_ne!(ptx, SPIN);
    let l = launch(1, vec![buffer("flag", 1), buffer("data", 2)]);
    let err = translate(&module(&ptx), "k", &l).expect_err("a store without a value");
    assert!(err.to_string().contains("no operand 1"), "{err}");
}

/// `.extern .shared x[]` is sized by the launch, which this model has no
/// size for: refused by name rather than modelled as one element.
#[test]
fn dynamic_shared_memory_is_refused_by_name() {
    let ptx = format!(".extern .shared .align 16 .b8 __dynamic_shared[];\n{SPIN}");
    let l = launch(1, vec![buffer("flag", 1), buffer("data", 1)]);
    let err = translate(&module(&ptx), "k", &l).expect_err("no size");
    assert!(
        err.to_string()
            .contains("the shared array __dynamic_shared has no size in the PTX"),
        "{err}"
    );
}
