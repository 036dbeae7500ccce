//! The targets our code is held to, per kernel, against NVRTC's best
//! compile of the twin (the `__restrict__` variant, or the plain one where
//! aliasing cannot matter): no spills and no local memory where NVRTC has
//! none; registers, static instructions and dynamic instructions at most
//! [`RATIO`] times NVRTC's. And what ours does better than the plain-pointer
//! twin, which is how CUDA C++ is usually written: fewer instructions, or
//! loads through the read-only path (`ld.global.nc`) that NVRTC cannot prove
//! safe without `__restrict__`.

use std::fmt;

use serde::Serialize;

use crate::{KernelFigures, Row};

/// How far above NVRTC's figures ours may be.
pub const RATIO: f64 = 1.10;

/// A target a kernel misses, with both figures.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "target", rename_all = "kebab-case")]
pub enum Miss {
    /// Spill bytes (stores plus loads) where NVRTC spills none.
    Spills {
        /// Ours.
        ours: u64,
    },
    /// Stack frame or local memory bytes where NVRTC uses none.
    LocalMemory {
        /// Ours.
        ours: u64,
    },
    /// Registers per thread above [`RATIO`] times NVRTC's.
    Registers {
        /// Ours.
        ours: u64,
        /// NVRTC's.
        theirs: u64,
    },
    /// Static instructions (entry plus surviving functions) above the ratio.
    StaticInstructions {
        /// Ours.
        ours: u64,
        /// NVRTC's.
        theirs: u64,
    },
    /// Executed thread-instructions for the fixture's launches above the
    /// ratio.
    DynamicInstructions {
        /// Ours.
        ours: u64,
        /// NVRTC's.
        theirs: u64,
    },
}

/// Where ours is better than NVRTC's plain-pointer twin.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "advantage", rename_all = "kebab-case")]
pub enum Advantage {
    /// Fewer executed thread-instructions.
    FewerDynamicInstructions {
        /// Ours.
        ours: u64,
        /// NVRTC's plain twin.
        theirs: u64,
    },
    /// More global loads through the read-only data path.
    ReadOnlyLoads {
        /// Ours.
        ours: u64,
        /// NVRTC's plain twin.
        theirs: u64,
    },
}

/// A kernel's standing: the targets it misses (none: it meets them all) and
/// its advantages over plain CUDA C++.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Standing {
    /// Which compile the targets compare with: `restrict` or `plain`.
    pub against: &'static str,
    /// The targets missed.
    pub misses: Vec<Miss>,
    /// What ours does better than the plain twin.
    pub advantages: Vec<Advantage>,
}

fn ratio(ours: u64, theirs: u64) -> f64 {
    if theirs == 0 {
        f64::INFINITY
    } else {
        ours as f64 / theirs as f64
    }
}

impl fmt::Display for Miss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pair = |f: &mut fmt::Formatter<'_>, what: &str, ours: u64, theirs: u64| {
            write!(f, "{what} {ours} vs {theirs} ({:.2}×)", ratio(ours, theirs))
        };
        match *self {
            Miss::Spills { ours } => write!(f, "spills {ours} bytes vs none"),
            Miss::LocalMemory { ours } => write!(f, "local memory {ours} bytes vs none"),
            Miss::Registers { ours, theirs } => pair(f, "registers", ours, theirs),
            Miss::StaticInstructions { ours, theirs } => pair(f, "static", ours, theirs),
            Miss::DynamicInstructions { ours, theirs } => pair(f, "dynamic", ours, theirs),
        }
    }
}

impl fmt::Display for Advantage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Advantage::FewerDynamicInstructions { ours, theirs } => write!(
                f,
                "dynamic {ours} vs {theirs} ({:.2}×)",
                ratio(ours, theirs)
            ),
            Advantage::ReadOnlyLoads { ours, theirs } => {
                write!(f, "ld.global.nc {ours} vs {theirs}")
            }
        }
    }
}

fn static_total(k: &KernelFigures) -> u64 {
    (k.instructions + k.func_instructions) as u64
}

fn above(ours: u64, theirs: u64) -> bool {
    ours as f64 > theirs as f64 * RATIO
}

/// The standing of one row.
pub fn evaluate(row: &Row) -> Standing {
    let ours = &row.ours;
    let (against, theirs, theirs_dynamic) = match (&row.nvrtc_restrict, row.dynamic.nvrtc_restrict)
    {
        (Some(r), Some(d)) => ("restrict", r, d),
        _ => ("plain", &row.nvrtc_plain, row.dynamic.nvrtc_plain),
    };
    let mut misses = Vec::new();
    let spills = ours.spill_stores + ours.spill_loads;
    if spills > 0 && theirs.spill_stores + theirs.spill_loads == 0 {
        misses.push(Miss::Spills { ours: spills });
    }
    let local = ours.stack_frame.max(ours.lmem);
    if local > 0 && theirs.stack_frame.max(theirs.lmem) == 0 {
        misses.push(Miss::LocalMemory { ours: local });
    }
    let (regs, their_regs) = (u64::from(ours.registers), u64::from(theirs.registers));
    if above(regs, their_regs) {
        misses.push(Miss::Registers {
            ours: regs,
            theirs: their_regs,
        });
    }
    let (st, their_st) = (static_total(ours), static_total(theirs));
    if above(st, their_st) {
        misses.push(Miss::StaticInstructions {
            ours: st,
            theirs: their_st,
        });
    }
    if above(row.dynamic.ours, theirs_dynamic) {
        misses.push(Miss::DynamicInstructions {
            ours: row.dynamic.ours,
            theirs: theirs_dynamic,
        });
    }
    let mut advantages = Vec::new();
    if row.dynamic.ours < row.dynamic.nvrtc_plain {
        advantages.push(Advantage::FewerDynamicInstructions {
            ours: row.dynamic.ours,
            theirs: row.dynamic.nvrtc_plain,
        });
    }
    if ours.nc_loads > row.nvrtc_plain.nc_loads {
        advantages.push(Advantage::ReadOnlyLoads {
            ours: ours.nc_loads as u64,
            theirs: row.nvrtc_plain.nc_loads as u64,
        });
    }
    Standing {
        against,
        misses,
        advantages,
    }
}

/// One line per kernel ("meets every target" or its misses, and its
/// advantages over plain CUDA C++), then a count of each.
pub fn render(rows: &[Row]) -> String {
    let mut out = String::new();
    let (mut met, mut better) = (0, 0);
    for row in rows {
        let s = evaluate(row);
        let verdict = if s.misses.is_empty() {
            met += 1;
            format!("meets every target (vs nvrtc {})", s.against)
        } else {
            let m: Vec<String> = s.misses.iter().map(ToString::to_string).collect();
            format!("misses (vs nvrtc {}): {}", s.against, m.join(", "))
        };
        out.push_str(&format!("{:<24} {verdict}", row.fixture));
        if !s.advantages.is_empty() {
            better += 1;
            let a: Vec<String> = s.advantages.iter().map(ToString::to_string).collect();
            out.push_str(&format!("; beats nvrtc plain: {}", a.join(", ")));
        }
        out.push('\n');
    }
    out.push_str(&format!(
        "{met} of {} kernels meet every target (≤ {RATIO:.2}× registers and instructions, no \
         spills or local memory where NVRTC has none); {better} beat NVRTC on plain-pointer C++\n",
        rows.len()
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Dynamic;

    fn figures(registers: u32, instructions: usize, nc_loads: usize) -> KernelFigures {
        KernelFigures {
            entry: "k".to_owned(),
            instructions,
            registers,
            nc_loads,
            global_loads: 2,
            ..Default::default()
        }
    }

    fn row(ours: KernelFigures, restrict: Option<KernelFigures>, dynamic: Dynamic) -> Row {
        Row {
            fixture: "k".to_owned(),
            ours,
            nvrtc_plain: figures(10, 100, 0),
            nvrtc_restrict: restrict,
            dynamic,
            standing: Standing::default(),
        }
    }

    #[test]
    fn within_ten_percent_meets_and_beyond_misses() {
        let d = |ours, restrict| Dynamic {
            ours,
            nvrtc_plain: 1000,
            nvrtc_restrict: Some(restrict),
        };
        let r = row(
            figures(11, 110, 2),
            Some(figures(10, 100, 2)),
            d(1100, 1000),
        );
        let s = evaluate(&r);
        assert_eq!(s.against, "restrict");
        assert!(s.misses.is_empty(), "{s:?}");
        assert_eq!(
            s.advantages,
            [Advantage::ReadOnlyLoads { ours: 2, theirs: 0 }]
        );
        let r = row(figures(12, 111, 0), Some(figures(10, 100, 2)), d(999, 900));
        let s = evaluate(&r);
        assert_eq!(
            s.misses,
            [
                Miss::Registers {
                    ours: 12,
                    theirs: 10
                },
                Miss::StaticInstructions {
                    ours: 111,
                    theirs: 100
                },
                Miss::DynamicInstructions {
                    ours: 999,
                    theirs: 900
                },
            ]
        );
        assert_eq!(
            s.advantages,
            [Advantage::FewerDynamicInstructions {
                ours: 999,
                theirs: 1000
            }]
        );
        let text = render(&[r]);
        assert!(text.contains("registers 12 vs 10 (1.20×)"), "{text}");
        assert!(text.contains("0 of 1 kernels meet every target"), "{text}");
    }

    #[test]
    fn spills_and_local_memory_miss_only_where_nvrtc_has_none() {
        let mut ours = figures(10, 100, 0);
        ours.spill_stores = 8;
        ours.stack_frame = 16;
        let mut theirs = figures(10, 100, 0);
        let dynamic = Dynamic {
            ours: 10,
            nvrtc_plain: 10,
            nvrtc_restrict: None,
        };
        let mut r = row(ours.clone(), None, dynamic.clone());
        r.nvrtc_plain = theirs.clone();
        let s = evaluate(&r);
        assert_eq!(s.against, "plain");
        assert_eq!(
            s.misses,
            [Miss::Spills { ours: 8 }, Miss::LocalMemory { ours: 16 }]
        );
        theirs.spill_loads = 4;
        theirs.lmem = 4;
        r.nvrtc_plain = theirs;
        assert!(evaluate(&r).misses.is_empty());
    }
}
