//! A small PTX text builder: fresh virtual registers of each type, one instruction per
//! line, and the module header with the `.entry` line written from the kernel's
//! [`KernelSignature`] (so the PTX parameter list and the launch check agree by construction).
//!
//! The generated PTX targets ISA 7.0 / `sm_80`: the oldest that has `min.NaN`/`max.NaN`, old
//! enough for every driver that supports Ampere, and JIT-compiled by the driver for newer GPUs.

use std::fmt::Write;

use super::super::launch::KernelSignature;

/// PTX ISA version and target written in every module header.
pub const PTX_VERSION: &str = "7.0";
pub const PTX_TARGET: &str = "sm_80";

/// Register classes we allocate.
#[derive(Clone, Copy)]
enum Class {
    F32,
    B32,
    B64,
    Pred,
}

/// Builds the body of one kernel.
#[derive(Default)]
pub struct PtxBuilder {
    body: String,
    counts: [u32; 4],
    shared: String,
    label_count: u32,
}

impl PtxBuilder {
    pub fn new() -> PtxBuilder {
        PtxBuilder::default()
    }

    fn reg(&mut self, class: Class) -> String {
        let (prefix, slot) = match class {
            Class::F32 => ("%f", 0),
            Class::B32 => ("%r", 1),
            Class::B64 => ("%rd", 2),
            Class::Pred => ("%p", 3),
        };
        let n = self.counts[slot];
        self.counts[slot] += 1;
        format!("{prefix}{n}")
    }

    /// A fresh `.f32` register.
    pub fn f32(&mut self) -> String {
        self.reg(Class::F32)
    }
    /// A fresh `.b32` register (used as `.u32`/`.s32`).
    pub fn b32(&mut self) -> String {
        self.reg(Class::B32)
    }
    /// A fresh `.b64` register (used as `.u64`/`.s64`).
    pub fn b64(&mut self) -> String {
        self.reg(Class::B64)
    }
    /// A fresh predicate register.
    pub fn pred(&mut self) -> String {
        self.reg(Class::Pred)
    }

    /// A fresh label name.
    pub fn label(&mut self, hint: &str) -> String {
        self.label_count += 1;
        format!("L_{hint}_{}", self.label_count)
    }

    /// Appends one instruction (without the trailing `;`).
    pub fn op(&mut self, instruction: impl AsRef<str>) {
        let _ = writeln!(self.body, "\t{};", instruction.as_ref());
    }

    /// Places a label.
    pub fn place(&mut self, label: &str) {
        let _ = writeln!(self.body, "{label}:");
    }

    /// Declares a shared-memory array of `count` f32 (or `elem_bytes`-sized) elements.
    pub fn shared_array(&mut self, name: &str, elem_bytes: u32, count: u32) {
        let _ = writeln!(self.shared, "\t.shared .align 8 .b8 {name}[{}];", elem_bytes * count);
    }

    /// Loads parameter `index` of `kind`'s PTX type into a fresh register.
    pub fn param_u64(&mut self, index: usize) -> String {
        let r = self.b64();
        self.op(format!("ld.param.u64 {r}, [p{index}]"));
        r
    }
    pub fn param_s64(&mut self, index: usize) -> String {
        let r = self.b64();
        self.op(format!("ld.param.s64 {r}, [p{index}]"));
        r
    }
    pub fn param_f32(&mut self, index: usize) -> String {
        let r = self.f32();
        self.op(format!("ld.param.f32 {r}, [p{index}]"));
        r
    }
    /// A kernel pointer parameter converted to a global address.
    pub fn param_global_ptr(&mut self, index: usize) -> String {
        let raw = self.param_u64(index);
        let r = self.b64();
        self.op(format!("cvta.to.global.u64 {r}, {raw}"));
        r
    }

    /// `base + index * elem_bytes` for a signed 64-bit element index.
    pub fn element_address(&mut self, base: &str, index: &str, elem_bytes: u32) -> String {
        let r = self.b64();
        self.op(format!("mad.lo.s64 {r}, {index}, {elem_bytes}, {base}"));
        r
    }

    /// The global thread index `ctaid.x * ntid.x + tid.x` as a 64-bit value.
    pub fn global_thread_index(&mut self) -> String {
        let (ctaid, ntid, tid) = (self.b32(), self.b32(), self.b32());
        self.op(format!("mov.u32 {ctaid}, %ctaid.x"));
        self.op(format!("mov.u32 {ntid}, %ntid.x"));
        self.op(format!("mov.u32 {tid}, %tid.x"));
        let wide = self.b64();
        self.op(format!("mul.wide.u32 {wide}, {ctaid}, {ntid}"));
        let tid64 = self.b64();
        self.op(format!("cvt.u64.u32 {tid64}, {tid}"));
        let index = self.b64();
        self.op(format!("add.s64 {index}, {wide}, {tid64}"));
        index
    }

    /// Field `i` (16 bits, from the lowest) of a parameter packed by [`pack16`].
    pub fn packed_field(&mut self, packed: &str, i: u32) -> String {
        let (shifted, value) = (self.b64(), self.b64());
        self.op(format!("shr.u64 {shifted}, {packed}, {}", 16 * i));
        self.op(format!("and.b64 {value}, {shifted}, 65535"));
        value
    }

    /// The global thread index, branching to `done` at or past `numel` (parameter
    /// `numel_param`): the start of a one-thread-per-output-element kernel.
    pub fn output_element(&mut self, numel_param: usize, done: &str) -> String {
        let index = self.global_thread_index();
        let numel = self.param_s64(numel_param);
        let outside = self.pred();
        self.op(format!("setp.ge.s64 {outside}, {index}, {numel}"));
        self.op(format!("@{outside} bra {done}"));
        index
    }

    /// `(n, c, oh, ow)` of element `index` of a contiguous `(N, C, OH, OW)` output.
    pub fn split_nchw(&mut self, index: &str, c_len: &str, oh_len: &str, ow_len: &str) -> [String; 4] {
        let (ow, oh, c, n, rest) = (self.b64(), self.b64(), self.b64(), self.b64(), self.b64());
        self.op(format!("rem.u64 {ow}, {index}, {ow_len}"));
        self.op(format!("div.u64 {rest}, {index}, {ow_len}"));
        self.op(format!("rem.u64 {oh}, {rest}, {oh_len}"));
        self.op(format!("div.u64 {rest}, {rest}, {oh_len}"));
        self.op(format!("rem.u64 {c}, {rest}, {c_len}"));
        self.op(format!("div.u64 {n}, {rest}, {c_len}"));
        [n, c, oh, ow]
    }

    /// The complete module text: header, `.entry` from `signature`, register declarations,
    /// shared arrays and body.
    pub fn finish(self, signature: &KernelSignature) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "// generated by torchlower-backend (cuda::kernels)");
        let _ = writeln!(out, ".version {PTX_VERSION}\n.target {PTX_TARGET}\n.address_size 64\n");
        let _ = writeln!(out, ".visible .entry {}({})\n{{", signature.name, signature.ptx_params());
        let names = [".f32 %f", ".b32 %r", ".b64 %rd", ".pred %p"];
        for (count, name) in self.counts.iter().zip(names) {
            if *count > 0 {
                let _ = writeln!(out, "\t.reg {name}<{count}>;");
            }
        }
        out.push_str(&self.shared);
        out.push_str(&self.body);
        out.push_str("\tret;\n}\n");
        out
    }
}

/// A PTX `.f32` immediate with the exact bits of `value`.
pub fn f32_imm(value: f32) -> String {
    format!("0f{:08X}", value.to_bits())
}

/// Four values of 16 bits in one 64-bit kernel parameter (the lowest first), read back by
/// [`PtxBuilder::packed_field`]; `None` when one does not fit. Keeps the pooling and
/// convolution kernels within the launch's 16 parameters.
pub fn pack16(fields: [i64; 4]) -> Option<i64> {
    fields.iter().all(|&f| (0..1 << 16).contains(&f)).then(|| fields.iter().enumerate().fold(0i64, |acc, (i, &f)| acc | (f << (16 * i))))
}
