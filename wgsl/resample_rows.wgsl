// Resample fast path: the row walk (resample_rows, resample_rows_half). Same operator, tables and
// Params as resample.wgsl (included; its header has the index math); tested against its
// resample_packed.
// resample_rows: packed float32/float16 output (and int8/uint8 nearest) whose rows are whole
// 16-byte blocks (or, with RAGGED, whole words), any axis forms (tables or COMPUTED); linear with the batch or
// channel interpolated walks each of an output's input planes beside the others: one thread owns
// one block column and walks a band of rows (see below). resample_rows_half: its float16 linear form, 4 outputs per thread;
// resample_rows_byte: its int8 / uint8 linear form, 4 outputs (a word) per thread.
// Bindings: as resample.wgsl; resample_rows writes output4, resample_rows_half output2 (8-byte
// stores), resample_rows_byte output; all three output and output_atomic (RAGGED, ENDS). Overrides: resample.wgsl's, and HALF.

#include "resample.wgsl"

override HALF: u32 = 0u;    // resample_rows with float16: 1 = 4 outputs (8 bytes, output2) per thread, not 8
// Rows of a whole number of words but not of a thread's outputs: a row's last thread stores only
// its words inside the row (as u32 words through `output`; row starts counted in elements).
override RAGGED: bool = false;
// ENDS: 8/16-bit output rows of any length (not whole words; rows start anywhere in a word), in
// each row walk (resample_rows, _half, _byte): a thread's outputs from element e (column ow) go
// where they lie, the words wholly its own stored, the (one or two) words it shares with the thread
// before or after it (or with the next row) merged with atomics on its own bytes only.
override ENDS: bool = false;
// Input planes an output's rows read (linear): 1, or 2 / 4 where the channel and/or the batch are
// interpolated (each walked with its own row cache). A constant, so that one plane keeps one walk's
// registers (four walks held for one plane ran the row walks 15-25% slower on the H100).
override ROW_PLANES: u32 = 1u;
// Channels in the lanes (channels-fastest input, e.g. NHWC): thread = (n, band, block column, c),
// c fastest, so a warp's loads are runs of channels; its stores go to as many planes.
override C_LANES: bool = false;

@group(0) @binding(7) var<storage, read_write> output2: array<vec2<u32>>;

// -- row walk -------------------------------------------------------------------------------------
// resample_rows: packed float32/float16 output, 16-byte aligned, rows of a whole number of 16-byte
// blocks (V = 4 or 8 outputs) (the host checks all of that).
// Thread = (n, c, band, block column g); lanes of a warp take consecutive g, so every load and
// store of a warp is contiguous. A thread reads (or computes) its V columns' W taps once, then
// walks the band's output rows (p.band_rows of them): each input row it needs is interpolated
// along W once (linear: v = w0 * a + w1 * b per column, the reference's order) and kept in one of
// two registers slots, so with upsampling along H an input row serves several output rows; the
// vertical blend
// acc = 0 + wh0 * v(h0) (+ wh1 * v(h1)) is the reference's sum (wn = wc = 1 exactly; with the
// batch or channel interpolated, the terms (((wn * wc) * wh) * v) of each input plane's rows, the
// planes in the reference's order). Branches on
// the row cache are uniform across a warp except where it straddles two bands.

// W taps of 4 consecutive output columns from column ow (table entries, or computed: COMPUTED).
struct Quad4 {
    i0: vec4<u32>,
    i1: vec4<u32>,
    w0: vec4<f32>,
    w1: vec4<f32>,
}

fn w_quad(ow: u32) -> Quad4 {
    // RAGGED, ENDS: columns past the row's last repeat it (their outputs are not stored)
    let last = select(0xFFFFFFFFu, p.out_sizes.w - 1u, RAGGED || ENDS);
    let t0 = linear_entry(3u, min(ow, last));
    let t1 = linear_entry(3u, min(ow + 1u, last));
    let t2 = linear_entry(3u, min(ow + 2u, last));
    let t3 = linear_entry(3u, min(ow + 3u, last));
    return Quad4(vec4<u32>(t0.x, t1.x, t2.x, t3.x), vec4<u32>(t0.y, t1.y, t2.y, t3.y),
                 bitcast<vec4<f32>>(vec4<u32>(t0.z, t1.z, t2.z, t3.z)),
                 bitcast<vec4<f32>>(vec4<u32>(t0.w, t1.w, t2.w, t3.w)));
}

// 4 outputs interpolated along W on the input row starting at element `row`.
fn h_quad(row: u32, q: Quad4) -> vec4<f32> {
    let a = vec4<f32>(load(row + q.i0.x), load(row + q.i0.y), load(row + q.i0.z), load(row + q.i0.w));
    if (p.taps.w == 1u) { return a; }
    let b = vec4<f32>(load(row + q.i1.x), load(row + q.i1.y), load(row + q.i1.z), load(row + q.i1.w));
    return q.w0 * a + q.w1 * b;
}

// One row of a thread's block: 4 (float32) or 8 (float16, lo then hi) values.
struct Row8 {
    lo: vec4<f32>,
    hi: vec4<f32>,
}

fn wide() -> bool { return DTYPE == 1u && HALF == 0u; }   // 8 outputs per thread

fn h_row(row: u32, qa: Quad4, qb: Quad4) -> Row8 {
    var r = Row8(h_quad(row, qa), vec4<f32>(0.0));
    if (wide()) { r.hi = h_quad(row, qb); }
    return r;
}

// Raw bits of a nearest block (16 bytes) on the input row starting at element `row`: the input
// columns of its 4 (float32), 8 (float16: ia, ib) or 16 (int8 / uint8: ia..id) outputs.
fn n_block(row: u32, ia: vec4<u32>, ib: vec4<u32>, ic: vec4<u32>, id: vec4<u32>) -> vec4<u32> {
    let a = gather4(row, ia);
    if (DTYPE == 0u) { return a; }
    if (DTYPE == 1u) { return halves_block(a, gather4(row, ib)); }
    return bytes_block(a, gather4(row, ib), gather4(row, ic), gather4(row, id));
}

// Nearest: the input offsets along W of the 4 output columns from ow (a multiple of 4): one vec4 of
// the table (its W entries start on a vec4), or computed (COMPUTED).
fn w_idx4(ow: u32) -> vec4<u32> {
    if ((COMPUTED & 8u) == 0u) { return table4[(p.table_start.w + ow) >> 2u]; }
    return vec4<u32>(computed_nearest(3u, ow), computed_nearest(3u, ow + 1u), computed_nearest(3u, ow + 2u),
                     computed_nearest(3u, ow + 3u));
}

// Cache of two W-interpolated input rows: ra older, rb newer.
struct Walk {
    ra: u32,
    rb: u32,
    va: Row8,
    vb: Row8,
}

// Output row oh of a thread's block (linear) from the input plane at `base`, added to `acc` with
// the plane's weight wc = wn * wc (1 where neither the batch nor the channel is interpolated): lo
// (and hi for 8 outputs), each term ((wc * wh) * v) in the reference's order.
fn linear_row(w: ptr<function, Walk>, oh: u32, base: u32, qa: Quad4, qb: Quad4, wc: f32, acc: Row8) -> Row8 {
    let eh = linear_entry(2u, oh);
    let r0 = base + eh.x;
    if (r0 != (*w).ra && r0 != (*w).rb) {
        (*w).ra = (*w).rb;
        (*w).va = (*w).vb;
        (*w).rb = r0;
        (*w).vb = h_row(r0, qa, qb);
    }
    let hit0 = r0 == (*w).rb;
    let wh0 = wc * bitcast<f32>(eh.z);
    var lo = acc.lo + wh0 * select((*w).va.lo, (*w).vb.lo, hit0);
    var hi = acc.hi;
    if (wide()) { hi = acc.hi + wh0 * select((*w).va.hi, (*w).vb.hi, hit0); }
    if (p.taps.z == 2u) {
        let r1 = base + eh.y;
        if (r1 != (*w).ra && r1 != (*w).rb) {
            (*w).ra = (*w).rb;
            (*w).va = (*w).vb;
            (*w).rb = r1;
            (*w).vb = h_row(r1, qa, qb);
        }
        let hit1 = r1 == (*w).rb;
        let wh1 = wc * bitcast<f32>(eh.w);
        lo += wh1 * select((*w).va.lo, (*w).vb.lo, hit1);
        if (wide()) { hi += wh1 * select((*w).va.hi, (*w).vb.hi, hit1); }
    }
    return Row8(lo, hi);
}

// Where a thread of resample_rows works: its band's rows, first output (in units of its outputs
// per thread), input base of (n, c) and its first column.
struct Place {
    oh0: u32,
    oh1: u32,
    dst: u32,
    step: u32,
    n: u32,
    c: u32,
    ow: u32,
}

fn rows_place(tid: u32, v: u32) -> Place {
    var g = tid % p.row_blocks;
    var r = tid / p.row_blocks;
    var band = r % p.row_bands;
    r = r / p.row_bands;
    var c = r % p.out_sizes.y;
    var n = r / p.out_sizes.y;
    if (C_LANES) {
        // channels in the lanes: neighbouring threads read neighbouring input elements of a
        // channels-fastest input (each stores its own plane's block)
        c = tid % p.out_sizes.y;
        r = tid / p.out_sizes.y;
        g = r % p.row_blocks;
        r = r / p.row_blocks;
        band = r % p.row_bands;
        n = r / p.row_bands;
    }
    let oh0 = band * p.band_rows;
    let ow = g * v;
    let e = p.output_base + ((n * p.out_sizes.y + c) * p.out_sizes.z + oh0) * p.out_sizes.w + ow;
    // n and c as the tables index them: a plan split past the binding limit runs whole (n, c)
    // planes a part, from p.origin (0 otherwise)
    let oh1 = min(oh0 + p.band_rows, p.out_sizes.z);
    if (RAGGED || ENDS) { return Place(oh0, oh1, e, p.out_sizes.w, n + p.origin.x, c + p.origin.y, ow); }
    return Place(oh0, oh1, e / v, p.out_sizes.w / v, n + p.origin.x, c + p.origin.y, ow);
}

// RAGGED: the first `words` (2 or 4) words of x, for the outputs from element dst (column ow)
// on, each stored where it lies inside the row (rows are whole words: a word is all in or all
// out); a group wholly inside its row is stored as 16- or 8-byte vectors where it is aligned to them.
fn store_words(dst: u32, ow: u32, x: vec4<u32>, words: u32) {
    let pw = 4u / elem_bytes();
    let w0 = dst / pw;
    if (ow + words * pw <= p.out_sizes.w) {
        if (words == 4u && w0 % 4u == 0u) {
            output4[w0 / 4u] = x;
            return;
        }
        if (w0 % 2u == 0u) {
            output2[w0 / 2u] = x.xy;
            if (words == 4u) { output2[w0 / 2u + 1u] = x.zw; }
            return;
        }
    }
    // word by word, written out (no vector indexed by a variable: that can land in local memory
    // on NVIDIA)
    let w = p.out_sizes.w;
    if (ow < w) { output[w0] = x.x; }
    if (words > 1u && ow + pw < w) { output[w0 + 1u] = x.y; }
    if (words > 2u && ow + 2u * pw < w) { output[w0 + 2u] = x.z; }
    if (words > 3u && ow + 3u * pw < w) { output[w0 + 3u] = x.w; }
}

// Bytes [a, b) of a word as a bit mask (0 <= a < b <= 4).
fn byte_mask(a: u32, b: u32) -> u32 {
    let head = 0xFFFFFFFFu << (8u * a);
    return select(head & ((1u << (8u * b)) - 1u), head, b >= 4u);
}

// Word w's part of the bytes [b0, b1) of the output, from v (merge_word: whole words stored, shared
// ones merged with atomics, nothing outside the span).
fn put_span(w: u32, v: u32, b0: u32, b1: u32) {
    let lo = max(b0, 4u * w);
    let hi = min(b1, 4u * w + 4u);
    if (lo < hi) { merge_word(w, v, byte_mask(lo - 4u * w, hi - 4u * w)); }
}

// ENDS: the first `words` (1, 2 or 4; the others 0) words of x, the outputs from element e (column
// ow of its row), those inside the row stored where they lie (written out: no vector indexed by a
// variable).
fn store_ends(e: u32, ow: u32, x: vec4<u32>, words: u32) {
    let eb = elem_bytes();
    let b0 = e * eb;
    let b1 = b0 + min(4u * words / eb, p.out_sizes.w - ow) * eb;
    let s = (b0 & 3u) * 8u;
    let w0 = b0 >> 2u;
    if (words == 1u) {
        // one word (resample_rows_byte): its bytes in the word they start in and the next (two
        // merges, the span's masks worked out once: five spans ran 1.17x slower on the H200)
        let m = byte_mask(0u, b1 - b0);
        merge_word(w0, x.x << s, m << s);
        if (s != 0u) { merge_word(w0 + 1u, x.x >> (32u - s), m >> (32u - s)); }
        return;
    }
    if (s == 0u) {
        put_span(w0, x.x, b0, b1);
        put_span(w0 + 1u, x.y, b0, b1);
        if (words > 2u) {
            put_span(w0 + 2u, x.z, b0, b1);
            put_span(w0 + 3u, x.w, b0, b1);
        }
        return;
    }
    let r = 32u - s;
    put_span(w0, x.x << s, b0, b1);
    put_span(w0 + 1u, (x.y << s) | (x.x >> r), b0, b1);
    put_span(w0 + 2u, (x.z << s) | (x.y >> r), b0, b1);
    if (words > 2u) {
        put_span(w0 + 3u, (x.w << s) | (x.z >> r), b0, b1);
        put_span(w0 + 4u, x.w >> r, b0, b1);
    }
}

// One thread's 16 bytes of outputs at dst (a block index, or an element with RAGGED or ENDS).
fn store_block(pl: Place, dst: u32, x: vec4<u32>) {
    if (ENDS) {
        store_ends(dst, pl.ow, x, 4u);
    } else if (RAGGED) {
        store_words(dst, pl.ow, x, 4u);
    } else {
        output4[dst] = x;
    }
}

// A thread's input planes (linear): the tap combinations (n0, c0), (n0, c1), (n1, c0), (n1, c1) of its
// output's batch and channel (from input element `base` on), with their weights wn * wc (1 where
// neither axis is interpolated); only the combinations of interpolated axes are walked (p.taps).
struct Planes {
    b: vec4<u32>,
    w: vec4<f32>,
}

fn planes(pl: Place, base: u32) -> Planes {
    // (the batch entry's words through `table`: every entry point binds it, as the others do)
    let k = 4u * (p.table_start.x + pl.n);
    var en = vec4<u32>(table[k], table[k + 1u], table[k + 2u], table[k + 3u]);
    if ((COMPUTED & 1u) != 0u) { en = computed_linear(0u, pl.n); }
    let ec = linear_entry(1u, pl.c);
    let wn = bitcast<vec2<f32>>(en.zw);
    let wc = bitcast<vec2<f32>>(ec.zw);
    return Planes(vec4<u32>(base) + vec4<u32>(en.x + ec.x, en.x + ec.y, en.y + ec.x, en.y + ec.y),
                  vec4<f32>(wn.x * wc.x, wn.x * wc.y, wn.y * wc.x, wn.y * wc.y));
}

// Output row oh of a thread's block, summed over its input planes in the reference's order (each
// plane with its own cache of W-interpolated rows).
fn linear_rows(w0: ptr<function, Walk>, w1: ptr<function, Walk>, w2: ptr<function, Walk>, w3: ptr<function, Walk>,
               oh: u32, ps: Planes, qa: Quad4, qb: Quad4) -> Row8 {
    let zero = Row8(vec4<f32>(0.0), vec4<f32>(0.0));
    if (ROW_PLANES == 1u) { return linear_row(w0, oh, ps.b.x, qa, qb, 1.0, zero); }
    var r = linear_row(w0, oh, ps.b.x, qa, qb, ps.w.x, zero);
    if (p.taps.y == 2u) { r = linear_row(w1, oh, ps.b.y, qa, qb, ps.w.y, r); }
    if (ROW_PLANES == 4u) {
        r = linear_row(w2, oh, ps.b.z, qa, qb, ps.w.z, r);
        if (p.taps.y == 2u) { r = linear_row(w3, oh, ps.b.w, qa, qb, ps.w.w, r); }
    } else if (p.taps.x == 2u) {
        r = linear_row(w1, oh, ps.b.z, qa, qb, ps.w.z, r);   // (the batch alone: its second plane)
    }
    return r;
}

fn empty_walk() -> Walk {
    return Walk(0xFFFFFFFFu, 0xFFFFFFFFu, Row8(vec4<f32>(0.0), vec4<f32>(0.0)), Row8(vec4<f32>(0.0), vec4<f32>(0.0)));
}

@compute @workgroup_size(WG)
fn resample_rows(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let tid = thread_id(gid, nwg);
    if (tid >= p.row_threads) { return; }
    let pl = rows_place(tid, 16u / elem_bytes());
    var dst = pl.dst;
    if (MODE == 0u) {
        let base = p.input_base + nearest_entry(0u, pl.n) + nearest_entry(1u, pl.c);
        let ia = w_idx4(pl.ow);
        var ib = vec4<u32>(0u);
        var ic = vec4<u32>(0u);
        var id = vec4<u32>(0u);
        if (DTYPE >= 1u) { ib = w_idx4(pl.ow + 4u); }
        if (DTYPE >= 2u) {
            ic = w_idx4(pl.ow + 8u);
            id = w_idx4(pl.ow + 12u);
        }
        var last = 0xFFFFFFFFu;
        var blk = vec4<u32>(0u);
        for (var oh = pl.oh0; oh < pl.oh1; oh++) {
            let row = base + nearest_entry(2u, oh);
            if (row != last) {
                blk = n_block(row, ia, ib, ic, id);
                last = row;
            }
            store_block(pl, dst, blk);
            dst += pl.step;
        }
        return;
    }
    let ps = planes(pl, p.input_base);
    let qa = w_quad(pl.ow);
    var qb = qa;
    if (wide()) { qb = w_quad(pl.ow + 4u); }
    var w = empty_walk();
    var w1 = empty_walk();
    var w2 = empty_walk();
    var w3 = empty_walk();
    for (var oh = pl.oh0; oh < pl.oh1; oh++) {
        let v = linear_rows(&w, &w1, &w2, &w3, oh, ps, qa, qb);
        if (DTYPE == 0u) {
            store_block(pl, dst, bitcast<vec4<u32>>(v.lo));
        } else {
            store_block(pl, dst, vec4<u32>(pack2x16float(v.lo.xy), pack2x16float(v.lo.zw), pack2x16float(v.hi.xy),
                                           pack2x16float(v.hi.zw)));
        }
        dst += pl.step;
    }
}

// Linear float16 with HALF == 1: 4 outputs (8 bytes) per thread.
@compute @workgroup_size(WG)
fn resample_rows_half(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let tid = thread_id(gid, nwg);
    if (tid >= p.row_threads) { return; }
    let pl = rows_place(tid, 4u);
    var dst = pl.dst;
    // (word 4 * i of the table is entry i's .x: this entry point binds `table` like the others)
    let ps = planes(pl, p.input_base);
    let qa = w_quad(pl.ow);
    var w = empty_walk();
    var w1 = empty_walk();
    var w2 = empty_walk();
    var w3 = empty_walk();
    for (var oh = pl.oh0; oh < pl.oh1; oh++) {
        let v = linear_rows(&w, &w1, &w2, &w3, oh, ps, qa, qa);
        let x = vec2<u32>(pack2x16float(v.lo.xy), pack2x16float(v.lo.zw));
        if (ENDS) {
            store_ends(dst, pl.ow, vec4<u32>(x, 0u, 0u), 2u);
        } else if (RAGGED) {
            store_words(dst, pl.ow, vec4<u32>(x, 0u, 0u), 2u);
        } else {
            output2[dst] = x;
        }
        dst += pl.step;
    }
}

// Linear int8 / uint8: 4 outputs (one word of output) per thread, rounded and saturated as
// store_bits does.
@compute @workgroup_size(WG)
fn resample_rows_byte(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let tid = thread_id(gid, nwg);
    if (tid >= p.row_threads) { return; }
    let pl = rows_place(tid, 4u);
    var dst = pl.dst;
    let ps = planes(pl, p.input_base);
    let qa = w_quad(pl.ow);
    var w = empty_walk();
    var w1 = empty_walk();
    var w2 = empty_walk();
    var w3 = empty_walk();
    for (var oh = pl.oh0; oh < pl.oh1; oh++) {
        let v = linear_rows(&w, &w1, &w2, &w3, oh, ps, qa, qa);
        if (ENDS) { store_ends(dst, pl.ow, vec4<u32>(bytes4(v.lo), 0u, 0u, 0u), 1u); } else { output[dst] = bytes4(v.lo); }
        dst += pl.step;
    }
}
