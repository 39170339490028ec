//! Tiled matrix multiply `out = A B (+ bias)`: 16x16 thread blocks, each stage loading one
//! 16x16 tile of A and of B into shared memory (zero-padded past the edges) and accumulating
//! with fused multiply-adds in increasing k — the order [`MatmulPlan::run_cpu`]
//! (super::plan::MatmulPlan::run_cpu) models. A, B and bias are strided, so `linear`'s
//! `w^T` is a stride swap, not a copy, and 2/1 and 1/2 ranks are 1-column/1-row views.

use super::super::launch::{KernelSignature, ParamKind, ParamKind::*};
use super::ptx::PtxBuilder;

/// Tile edge; blocks are `TILE x TILE` threads.
pub const TILE: u32 = 16;

/// `(out, a, b, bias, m, n, k, a_rs, a_cs, b_rs, b_cs, bias_stride, has_bias, batch_lo,
/// a_batch_hi, a_batch_lo, b_batch_hi, b_batch_lo)`: batch `z = ctaid.z` is `(z / batch_lo,
/// z % batch_lo)` over up to two batch dimensions, each operand stepping by its own batch
/// strides (0 where broadcast); the output is contiguous, `m * n` per batch.
pub const MATMUL_PARAMS: &[ParamKind] = &[Ptr, Ptr, Ptr, Ptr, I64, I64, I64, I64, I64, I64, I64, I64, U32, I64, I64, I64, I64, I64];

pub fn matmul_ptx(signature: &KernelSignature) -> String {
    let mut b = PtxBuilder::new();
    let tile = TILE;
    b.shared_array("tile_a", 4, tile * tile);
    b.shared_array("tile_b", 4, tile * tile);
    let out = b.param_global_ptr(0);
    let a = b.param_global_ptr(1);
    let bm = b.param_global_ptr(2);
    // This block's batch: move A, B and out to its matrices.
    let (out, a, bm) = {
        let bz = b.b32();
        b.op(format!("mov.u32 {bz}, %ctaid.z"));
        let z = b.b64();
        b.op(format!("cvt.u64.u32 {z}, {bz}"));
        let batch_lo = b.param_s64(13);
        let (z_hi, z_lo) = (b.b64(), b.b64());
        b.op(format!("div.u64 {z_hi}, {z}, {batch_lo}"));
        b.op(format!("mul.lo.s64 {z_lo}, {z_hi}, {batch_lo}"));
        b.op(format!("sub.s64 {z_lo}, {z}, {z_lo}"));
        let step = |b: &mut PtxBuilder, base: &str, hi_param: usize, lo_param: usize| {
            let (hi, lo) = (b.param_s64(hi_param), b.param_s64(lo_param));
            let off = b.b64();
            b.op(format!("mul.lo.s64 {off}, {z_hi}, {hi}"));
            b.op(format!("mad.lo.s64 {off}, {z_lo}, {lo}, {off}"));
            b.element_address(base, &off, 4)
        };
        let a = step(&mut b, &a, 14, 15);
        let bm = step(&mut b, &bm, 16, 17);
        let (m, n) = (b.param_s64(4), b.param_s64(5));
        let per_batch = b.b64();
        b.op(format!("mul.lo.s64 {per_batch}, {m}, {n}"));
        let off = b.b64();
        b.op(format!("mul.lo.s64 {off}, {z}, {per_batch}"));
        (b.element_address(&out, &off, 4), a, bm)
    };
    let bias = b.param_global_ptr(3);
    let m = b.param_s64(4);
    let n = b.param_s64(5);
    let k = b.param_s64(6);
    let a_rs = b.param_s64(7);
    let a_cs = b.param_s64(8);
    let b_rs = b.param_s64(9);
    let b_cs = b.param_s64(10);
    let bias_stride = b.param_s64(11);
    let has_bias = b.b32();
    b.op(format!("ld.param.u32 {has_bias}, [p12]"));

    let (tx, ty, bx, by) = (b.b32(), b.b32(), b.b32(), b.b32());
    b.op(format!("mov.u32 {tx}, %tid.x"));
    b.op(format!("mov.u32 {ty}, %tid.y"));
    b.op(format!("mov.u32 {bx}, %ctaid.x"));
    b.op(format!("mov.u32 {by}, %ctaid.y"));
    let (row, col) = (b.b64(), b.b64());
    b.op(format!("mul.wide.u32 {row}, {by}, {tile}"));
    let ty64 = b.b64();
    b.op(format!("cvt.u64.u32 {ty64}, {ty}"));
    b.op(format!("add.s64 {row}, {row}, {ty64}"));
    b.op(format!("mul.wide.u32 {col}, {bx}, {tile}"));
    let tx64 = b.b64();
    b.op(format!("cvt.u64.u32 {tx64}, {tx}"));
    b.op(format!("add.s64 {col}, {col}, {tx64}"));
    let (row_in, col_in) = (b.pred(), b.pred());
    b.op(format!("setp.lt.s64 {row_in}, {row}, {m}"));
    b.op(format!("setp.lt.s64 {col_in}, {col}, {n}"));

    // Shared addresses: this thread's slot, its A row and its B column.
    let (sa, sb) = (b.b32(), b.b32());
    b.op(format!("mov.u32 {sa}, tile_a"));
    b.op(format!("mov.u32 {sb}, tile_b"));
    let slot = b.b32();
    b.op(format!("mad.lo.u32 {slot}, {ty}, {tile}, {tx}"));
    let (slot_a, slot_b) = (b.b32(), b.b32());
    b.op(format!("mad.lo.u32 {slot_a}, {slot}, 4, {sa}"));
    b.op(format!("mad.lo.u32 {slot_b}, {slot}, 4, {sb}"));
    let a_row = b.b32();
    b.op(format!("mad.lo.u32 {a_row}, {ty}, {}, {sa}", tile * 4));
    let b_col = b.b32();
    b.op(format!("mad.lo.u32 {b_col}, {tx}, 4, {sb}"));

    let acc = b.f32();
    b.op(format!("mov.f32 {acc}, 0f00000000"));
    let kbase = b.b64();
    b.op(format!("mov.u64 {kbase}, 0"));
    let (top, end) = (b.label("ktile"), b.label("kdone"));
    b.place(&top);
    let finished = b.pred();
    b.op(format!("setp.ge.s64 {finished}, {kbase}, {k}"));
    b.op(format!("@{finished} bra {end}"));
    // A[row, kbase + tx]
    let ka = b.b64();
    b.op(format!("add.s64 {ka}, {kbase}, {tx64}"));
    let ka_in = b.pred();
    b.op(format!("setp.lt.s64 {ka_in}, {ka}, {k}"));
    b.op(format!("and.pred {ka_in}, {ka_in}, {row_in}"));
    let off_a = b.b64();
    b.op(format!("mul.lo.s64 {off_a}, {row}, {a_rs}"));
    b.op(format!("mad.lo.s64 {off_a}, {ka}, {a_cs}, {off_a}"));
    let addr_a = b.element_address(&a, &off_a, 4);
    let va = b.f32();
    b.op(format!("mov.f32 {va}, 0f00000000"));
    b.op(format!("@{ka_in} ld.global.f32 {va}, [{addr_a}]"));
    b.op(format!("st.shared.f32 [{slot_a}], {va}"));
    // B[kbase + ty, col]
    let kb = b.b64();
    b.op(format!("add.s64 {kb}, {kbase}, {ty64}"));
    let kb_in = b.pred();
    b.op(format!("setp.lt.s64 {kb_in}, {kb}, {k}"));
    b.op(format!("and.pred {kb_in}, {kb_in}, {col_in}"));
    let off_b = b.b64();
    b.op(format!("mul.lo.s64 {off_b}, {kb}, {b_rs}"));
    b.op(format!("mad.lo.s64 {off_b}, {col}, {b_cs}, {off_b}"));
    let addr_b = b.element_address(&bm, &off_b, 4);
    let vb = b.f32();
    b.op(format!("mov.f32 {vb}, 0f00000000"));
    b.op(format!("@{kb_in} ld.global.f32 {vb}, [{addr_b}]"));
    b.op(format!("st.shared.f32 [{slot_b}], {vb}"));
    b.op("bar.sync 0");
    for kk in 0..tile {
        let (x, y) = (b.f32(), b.f32());
        b.op(format!("ld.shared.f32 {x}, [{a_row}+{}]", kk * 4));
        b.op(format!("ld.shared.f32 {y}, [{b_col}+{}]", kk * tile * 4));
        b.op(format!("fma.rn.f32 {acc}, {x}, {y}, {acc}"));
    }
    b.op("bar.sync 0");
    b.op(format!("add.s64 {kbase}, {kbase}, {tile}"));
    b.op(format!("bra {top}"));
    b.place(&end);

    let skip = b.label("store_done");
    let store = b.pred();
    b.op(format!("and.pred {store}, {row_in}, {col_in}"));
    b.op(format!("@!{store} bra {skip}"));
    let bias_on = b.pred();
    b.op(format!("setp.ne.u32 {bias_on}, {has_bias}, 0"));
    let off_bias = b.b64();
    b.op(format!("mul.lo.s64 {off_bias}, {col}, {bias_stride}"));
    let addr_bias = b.element_address(&bias, &off_bias, 4);
    let bv = b.f32();
    b.op(format!("@{bias_on} ld.global.f32 {bv}, [{addr_bias}]"));
    b.op(format!("@{bias_on} add.rn.f32 {acc}, {acc}, {bv}"));
    let off_out = b.b64();
    b.op(format!("mad.lo.s64 {off_out}, {row}, {n}, {col}"));
    let addr_out = b.element_address(&out, &off_out, 4);
    b.op(format!("st.global.f32 [{addr_out}], {acc}"));
    b.place(&skip);
    b.finish(signature)
}
