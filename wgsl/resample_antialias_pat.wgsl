// Resample3 antialias fast path: one tap pattern along W and one along H (aa_pat). Built on
// resample_antialias.wgsl (included: its bindings, Params, table helpers and stores); tested against
// its aa_element and the numpy reference.
//
// Where the scale along an axis is rational with a small period (1/2, 1/3, 2/3, 0.4, 2, ...), a
// thread's outputs find their taps at the same places of a window of input that moves by a whole
// number of elements from one thread to the next. The host finds the pattern (the first tap of each
// of a thread's outputs inside its window, and how many taps every output may use) and makes it
// structure: the shader picks its taps from registers with constant indices, which the compiler
// resolves when it builds the pipeline. Each input word a thread loads is converted once and feeds
// every output tap that lies on it (aa_taps loads every tap of every output again: at 1/2 four times).
//
// A thread owns PV output columns (ow0 = g * PV ..) of RB output rows (a band, oh0 = band * RB ..)
// of one (n, c) plane (n and c not filtered: one tap of weight 1, the host checks):
//  - along W its window is the input words k0 .. k0 + NWD - 1 of a row, k0 = g * SW + B0 (a multiple
//    of 4 with VW); output j's taps are window elements DW(j) .. DW(j) + KW - 1, weighed by a host
//    table of slot weights (zero where the reference has no tap: its taps always lie inside the
//    slots, by construction);
//  - along H its band reads input rows b0 + 0 .. b0 + NR - 1, b0 = band * SH + LH0; output row k's taps
//    are band rows DH(k) .. DH(k) + KH - 1, weighed by a second slot table.
// Slots outside the input (the first and last threads and bands) read 0 and weigh 0: the reference
// folds the edge's clamped taps onto the edge pixel, which the slot tables do too. A float tap of
// weight 0 on a real element would turn an infinity or a NaN there into a NaN the reference never
// reads: where the slot tables have such taps (SAFE = 0) float types select them out; 8-bit values
// are finite, and w * x = +-0 adds nothing (a sum that starts at +0 is never -0).
// Each input row of the band is filtered along W once (the PV outputs' sums in ascending tap order)
// and added into every output row whose H taps cover it, in ascending row order; a row is stored
// as soon as its last tap is added. Sums in the reference's order (W first, then H, ascending taps).
// The W sums are written-out code (every window index a constant, nothing in local memory); the band
// rows are a loop, two rows an iteration (written out as well, each pipeline took 20-45 s to build
// on lavapipe; on the H100 the written-out rows ran 0-15 % faster), so an output row's H slot is a
// run-time value and the band's RB x PV accumulators stay live through the loop.
//
// Overrides (structure, part of the pipeline cache key): PV (4, 6 or 8; 6: outputs 6 and 7 of the
// pair weigh 0 and are never stored), NWD (window words, <= 24: those
// that hold elements some slot reads), VW (1: the window is loaded as 16-byte vectors, NWD a multiple
// of 4: rows of whole vectors from a vector boundary, W stride 1; 0: as words), SV (1: a thread's PV
// outputs of a row are stored as one or two vectors of min(16, PV x element) bytes: W stride 1, its
// first output on such a boundary; a row's partial last group stores element by element), KW, DW_A
// (DW of outputs 0-3, 8 bits each), DW_B (4-7), RB (1, 2 or 3: 3 where 2 and 1 give no pattern
// along h, e.g. at 3/4), KH, DH_A (DH of rows 0-2), NR, SAFE;
// IA, OA (8/16-bit rows at any element offset: read across words, stored shifted with atomic
// merges of shared words); and DTYPE, WG, CW (= 4, store_cols' four columns) of the included file.
// Uniforms: pat_w (first word of the W slot weights, SW in words, B0 in words as i32 bits, words in
// a row), pat_h (first word of the H slot weights, SH, LH0 as i32 bits, rows of the H slot table),
// pat_last (the bits of a row's last word that belong to the row), pat_rows (input rows), and
// column_groups, bands, walk_threads, div_groups, div_bands, div_c as aa_taps.

#include "resample_antialias.wgsl"

@group(0) @binding(7) var<storage, read> input4: array<vec4<u32>>;  // VW: the input, 16 bytes at a time
@group(0) @binding(8) var<storage, read_write> output2: array<vec2<u32>>;  // SV: the output, 8 bytes at a time
@group(0) @binding(9) var<storage, read_write> output4: array<vec4<u32>>;  // SV: 16 bytes at a time

override PV: u32 = 4u;
override NWD: u32 = 3u;
override VW: u32 = 0u;
override KW: u32 = 4u;
override DW_A: u32 = 0u;
override DW_B: u32 = 0u;
override KH: u32 = 4u;
override DH_A: u32 = 0u;
override NR: u32 = 4u;
override SAFE: u32 = 1u;
override SV: u32 = 0u;
override IA: u32 = 0u;  // 1: 8/16-bit input rows at any element offset: window words are read across
                        //   word boundaries (two loads, shifted), each row's shift its own; 0: rows
                        //   from a word boundary
override OA: u32 = 0u;  // 1: 8/16-bit output rows at any element offset: a thread's outputs are
                        //   shifted into place, the words they fill stored, the (at most two) words it
                        //   shares with a neighbour merged with atomics; 0: rows of whole words

// A thread's window: NWD raw input words (word i is component i % 4 of q[i / 4]).
struct Raw {
    q0: vec4<u32>,
    q1: vec4<u32>,
    q2: vec4<u32>,
    q3: vec4<u32>,
    q4: vec4<u32>,
    q5: vec4<u32>,
}

// The W slot weights of a thread's outputs: output j's taps 0-3 in a_j, 4-7 in b_j.
struct PatW {
    a0: vec4<f32>, a1: vec4<f32>, a2: vec4<f32>, a3: vec4<f32>,
    a4: vec4<f32>, a5: vec4<f32>, a6: vec4<f32>, a7: vec4<f32>,
    b0: vec4<f32>, b1: vec4<f32>, b2: vec4<f32>, b3: vec4<f32>,
    b4: vec4<f32>, b5: vec4<f32>, b6: vec4<f32>, b7: vec4<f32>,
}

// PV output values of one row: outputs 0-3 in lo, 4-7 in hi.
struct Pair {
    lo: vec4<f32>,
    hi: vec4<f32>,
}

// The accumulators of the band's RB (<= 3) output rows.
struct Acc {
    r0: Pair,
    r1: Pair,
    r2: Pair,
}

// Byte k (0-7) of a packed pair of overrides (DW_A/DW_B; DH_A alone).
fn pat_byte(a: u32, b: u32, k: u32) -> u32 { return (select(a, b, k >= 4u) >> (8u * (k & 3u))) & 0xFFu; }

// Window word i (a constant).
fn raw_word(w: Raw, i: u32) -> u32 {
    let q = i / 4u;
    var v = w.q0;
    v = select(v, w.q1, q == 1u);
    v = select(v, w.q2, q == 2u);
    v = select(v, w.q3, q == 3u);
    v = select(v, w.q4, q == 4u);
    v = select(v, w.q5, q == 5u);
    let c = i % 4u;
    return select(select(v.x, v.y, c == 1u), select(v.z, v.w, c == 3u), c >= 2u);
}

// Window element e (a constant) as f32: converted where it is used (the compiler converts each
// element once, however many taps read it).
fn win_elem(w: Raw, e: u32) -> f32 {
    let k = e % per_word();
    let x = raw_word(w, e / per_word());
    if (DTYPE == 0u) { return bitcast<f32>(x); }
    if (DTYPE == 1u) {
        let h = unpack2x16float(x);  // (one unpack a word: both of its elements)
        return select(h.x, h.y, k == 1u);
    }
    if (DTYPE == 2u) { return f32(i32(x << (24u - 8u * k)) >> 24u); }
    return f32((x >> (8u * k)) & 0xFFu);
}

// Window word i of the row whose first element lies sh bits into word rw (IA; else sh = 0), the
// window's first word kw after the row's first (words counted from the row's first element): 0 outside
// the row, the row's own bits of its last word (float32: a word is an element, p.in_strides.w apart;
// else stride 1, the host checks). `inner`: the whole window lies inside the row, none of it in a
// partial last word (no checks).
fn pat_word(rw: u32, sh: u32, kw: i32, i: u32, inner: bool) -> u32 {
    if (i >= NWD) { return 0u; }
    let sw = select(1u, p.in_strides.w, DTYPE == 0u);
    let at = kw + i32(i);
    if (inner) { return row_word(rw, u32(at) * sw, sh); }
    let n = i32(p.pat_w.w);
    let x = row_word(rw, u32(clamp(at, 0, n - 1)) * sw, sh);
    return select(0u, select(x, x & p.pat_last, at == n - 1), at >= 0 && at < n);
}

// Word k of the row whose first element lies sh bits into word rw (IA; else sh = 0): the bits of the
// row's elements k * (elements a word) .., from two loads where the row does not start on a word.
fn row_word(rw: u32, k: u32, sh: u32) -> u32 {
    let x = input[rw + k];
    if (IA == 0u) { return x; }
    // (a shift by 32 is a shift by 0 in WGSL: a row from a word boundary takes the word as it is)
    return select((x >> sh) | (input[rw + k + 1u] << (32u - sh)), x, sh == 0u);
}

// Window vector q (VW: the row is whole 16-byte vectors from a vector boundary, its first vector
// rw / 4; the window's first vector kw / 4 after it): 0 outside the row.
fn pat_vec(rw: u32, kw: i32, q: u32, inner: bool) -> vec4<u32> {
    if (4u * q >= NWD) { return vec4<u32>(0u); }
    let at = kw / 4 + i32(q);
    if (inner) { return input4[rw / 4u + u32(at)]; }
    let n = i32(p.pat_w.w / 4u);
    let x = input4[rw / 4u + u32(clamp(at, 0, n - 1))];
    return select(vec4<u32>(0u), x, at >= 0 && at < n);
}

fn pat_quad(rw: u32, sh: u32, kw: i32, q: u32, inner: bool) -> vec4<u32> {
    if (VW == 1u) { return pat_vec(rw, kw, q, inner); }
    return vec4<u32>(pat_word(rw, sh, kw, 4u * q, inner), pat_word(rw, sh, kw, 4u * q + 1u, inner),
                     pat_word(rw, sh, kw, 4u * q + 2u, inner), pat_word(rw, sh, kw, 4u * q + 3u, inner));
}

// The window on the row whose first element lies sh bits into word rw (words past NWD stay 0: never
// read).
fn pat_window(rw: u32, sh: u32, kw: i32, inner: bool) -> Raw {
    let z = vec4<u32>(0u);
    var w = Raw(pat_quad(rw, sh, kw, 0u, inner), z, z, z, z, z);
    if (NWD > 4u) { w.q1 = pat_quad(rw, sh, kw, 1u, inner); }
    if (NWD > 8u) { w.q2 = pat_quad(rw, sh, kw, 2u, inner); }
    if (NWD > 12u) { w.q3 = pat_quad(rw, sh, kw, 3u, inner); }
    if (NWD > 16u) { w.q4 = pat_quad(rw, sh, kw, 4u, inner); }
    if (NWD > 20u) { w.q5 = pat_quad(rw, sh, kw, 5u, inner); }
    return w;
}

// Weight times value; a float tap of weight 0 is selected out unless the slot tables have none on
// real elements (SAFE), see the header.
fn pat_term(wt: f32, x: f32) -> f32 {
    if (DTYPE >= 2u || SAFE == 1u) { return wt * x; }
    return select(0.0, wt * x, wt != 0.0);
}

// pat_term for four values of one weight (an H tap of four outputs).
fn pat_terms(wt: f32, v: vec4<f32>) -> vec4<f32> {
    if (DTYPE >= 2u || SAFE == 1u) { return wt * v; }
    return select(vec4<f32>(0.0), wt * v, wt != 0.0);
}

// Output j's W sum (j a constant): taps 0 .. KW - 1 of its slots, ascending.
fn pat_col(w: Raw, a: vec4<f32>, b: vec4<f32>, j: u32) -> f32 {
    let d = pat_byte(DW_A, DW_B, j);
    var s = 0.0;
    s = s + pat_term(a.x, win_elem(w, d));
    if (KW > 1u) { s = s + pat_term(a.y, win_elem(w, d + 1u)); }
    if (KW > 2u) { s = s + pat_term(a.z, win_elem(w, d + 2u)); }
    if (KW > 3u) { s = s + pat_term(a.w, win_elem(w, d + 3u)); }
    if (KW > 4u) { s = s + pat_term(b.x, win_elem(w, d + 4u)); }
    if (KW > 5u) { s = s + pat_term(b.y, win_elem(w, d + 5u)); }
    if (KW > 6u) { s = s + pat_term(b.z, win_elem(w, d + 6u)); }
    if (KW > 7u) { s = s + pat_term(b.w, win_elem(w, d + 7u)); }
    return s;
}

// The thread's PV outputs filtered along W on the row whose window is w.
fn pat_row(w: Raw, ws: PatW) -> Pair {
    var r = Pair(vec4<f32>(0.0), vec4<f32>(0.0));
    r.lo = vec4<f32>(pat_col(w, ws.a0, ws.b0, 0u), pat_col(w, ws.a1, ws.b1, 1u), pat_col(w, ws.a2, ws.b2, 2u),
                     pat_col(w, ws.a3, ws.b3, 3u));
    if (PV > 4u) {
        r.hi = vec4<f32>(pat_col(w, ws.a4, ws.b4, 4u), pat_col(w, ws.a5, ws.b5, 5u), pat_col(w, ws.a6, ws.b6, 6u),
                         pat_col(w, ws.a7, ws.b7, 7u));
    }
    return r;
}

// W slot weight t (< KW) of output j of thread g (slot tables: column groups fastest).
fn pat_wt(g: u32, j: u32, t: u32) -> f32 {
    if (t >= KW || j >= PV) { return 0.0; }
    return bitcast<f32>(table[p.pat_w.x + (j * KW + t) * p.column_groups + g]);
}

fn pat_wts4(g: u32, j: u32, t0: u32) -> vec4<f32> {
    return vec4<f32>(pat_wt(g, j, t0), pat_wt(g, j, t0 + 1u), pat_wt(g, j, t0 + 2u), pat_wt(g, j, t0 + 3u));
}

fn pat_weights(g: u32) -> PatW {
    var s: PatW;
    s.a0 = pat_wts4(g, 0u, 0u); s.a1 = pat_wts4(g, 1u, 0u); s.a2 = pat_wts4(g, 2u, 0u); s.a3 = pat_wts4(g, 3u, 0u);
    s.a4 = pat_wts4(g, 4u, 0u); s.a5 = pat_wts4(g, 5u, 0u); s.a6 = pat_wts4(g, 6u, 0u); s.a7 = pat_wts4(g, 7u, 0u);
    s.b0 = pat_wts4(g, 0u, 4u); s.b1 = pat_wts4(g, 1u, 4u); s.b2 = pat_wts4(g, 2u, 4u); s.b3 = pat_wts4(g, 3u, 4u);
    s.b4 = pat_wts4(g, 4u, 4u); s.b5 = pat_wts4(g, 5u, 4u); s.b6 = pat_wts4(g, 6u, 4u); s.b7 = pat_wts4(g, 7u, 4u);
    return s;
}

// The band's geometry, the same for all its rows.
struct Band {
    plane_in: u32,   // first input element of the (n, c) plane
    plane_out: u32,  // output element of column ow0 of the plane's row 0
    b0: i32,         // the band's first input row (may be < 0: slots above the input)
    oh0: u32,        // its first output row
    kw: i32,         // the window's first word, relative to a row's first word
    ncol: u32,       // the thread's columns inside the output row
    inner: bool,     // the window lies inside the row, none of it in a partial last word
}

// Four float16 outputs as two words (bytes4, in the included file, packs four 8-bit ones).
fn halves4(v: vec4<f32>) -> vec2<u32> { return vec2<u32>(pack2x16float(v.xy), pack2x16float(v.zw)); }

// The thread's PV outputs of a row, from output element dst (SV: on a vector boundary).
fn pat_store_vec(dst: u32, v: Pair) {
    if (DTYPE == 0u) {
        output4[dst / 4u] = bitcast<vec4<u32>>(v.lo);
        if (PV > 4u) { output4[dst / 4u + 1u] = bitcast<vec4<u32>>(v.hi); }
    } else if (DTYPE == 1u) {
        if (PV > 4u) {
            output4[dst / 8u] = vec4<u32>(halves4(v.lo), halves4(v.hi));
        } else {
            output2[dst / 4u] = halves4(v.lo);
        }
    } else if (PV > 4u) {
        output2[dst / 8u] = vec2<u32>(bytes4(v.lo), bytes4(v.hi));
    } else {
        output[dst / 4u] = bytes4(v.lo);
    }
}

// Words a, b funnel-shifted by sh bits (< 32): the high bits of a followed by b's low bits.
fn funnel(a: u32, b: u32, sh: u32) -> u32 { return select((b << sh) | (a >> (32u - sh)), b, sh == 0u); }

// The bits of the first n of 32-bit word i of a thread's packed outputs.
fn lane_mask(nb: u32, i: u32) -> u32 {
    let lo = 32u * i;
    if (nb >= lo + 32u) { return 0xFFFFFFFFu; }
    return select(0u, (1u << (nb - lo)) - 1u, nb > lo);
}

// OA (8/16-bit): the thread's first ncol outputs of a row from output element dst at any alignment,
// packed as from a word boundary (u: up to 4 words), then shifted by dst's place in its word.
fn pat_store_any(dst: u32, v: Pair, ncol: u32) {
    var u = vec4<u32>(0u);
    if (DTYPE == 1u) {
        u = vec4<u32>(halves4(v.lo), halves4(v.hi));
    } else {
        u = vec4<u32>(bytes4(v.lo), bytes4(v.hi), 0u, 0u);
    }
    let eb = 32u / per_word();
    let nb = ncol * eb;
    let m = vec4<u32>(lane_mask(nb, 0u), lane_mask(nb, 1u), lane_mask(nb, 2u), lane_mask(nb, 3u));
    let sh = (dst % per_word()) * eb;
    let wi = dst / per_word();
    let nw = (PV * eb + 31u) / 32u;  // words of a whole group (1 to 4)
    merge_word(wi, funnel(0u, u.x, sh), funnel(0u, m.x, sh));
    merge_word(wi + 1u, funnel(u.x, u.y, sh), funnel(m.x, m.y, sh));
    if (nw > 1u) { merge_word(wi + 2u, funnel(u.y, u.z, sh), funnel(m.y, m.z, sh)); }
    if (nw > 2u) { merge_word(wi + 3u, funnel(u.z, u.w, sh), funnel(m.z, m.w, sh)); }
    if (nw > 3u) { merge_word(wi + 4u, funnel(u.w, 0u, sh), funnel(m.w, 0u, sh)); }
}

// A row's PV outputs from output element dst: vectors (SV) where the thread's group is whole,
// else element by element (the row's partial last group); OA: at any alignment.
fn pat_store(dst: u32, v: Pair, ncol: u32) {
    if (OA == 1u) {
        pat_store_any(dst, v, ncol);
    } else if (SV == 1u && ncol == PV) {
        pat_store_vec(dst, v);
    } else {
        store_cols(dst, v.lo, ncol);
        if (PV > 4u && ncol > 4u) { store_cols(dst + 4u * p.out_strides.w, v.hi, ncol - 4u); }
    }
}

// Output row k (a constant) of the band takes band row r times its H slot weight, and is stored
// after its last tap.
fn pat_add(a: Pair, k: u32, r: u32, v: Pair, bd: Band) -> Pair {
    let i = r - pat_byte(DH_A, 0u, k);  // the slot (past KH, wrapped, for rows before the first)
    if (k >= RB || i >= KH) { return a; }
    let wh = bitcast<f32>(table[p.pat_h.x + i * p.pat_h.w + bd.oh0 + k]);
    var s = a;
    s.lo = s.lo + pat_terms(wh, v.lo);
    if (PV > 4u) { s.hi = s.hi + pat_terms(wh, v.hi); }
    if (i == KH - 1u && bd.oh0 + k < p.out_sizes.z) { pat_store(bd.plane_out + (bd.oh0 + k) * p.out_strides.z, s, bd.ncol); }
    return s;
}

// Band row r's window (a row above or below the input loads a row inside it: its sums are replaced
// by 0 in pat_use).
fn pat_load(r: u32, bd: Band) -> Raw {
    let h = clamp(bd.b0 + i32(r), 0, i32(p.pat_rows) - 1);
    let re = bd.plane_in + u32(h) * p.in_strides.z;
    return pat_window(re / per_word(), (re % per_word()) * (32u / per_word()), bd.kw, bd.inner);
}

// Band row r whose window is w: filtered along W, then added into the rows it feeds.
fn pat_use(a: Acc, r: u32, w: Raw, bd: Band, ws: PatW) -> Acc {
    let h = bd.b0 + i32(r);
    let inside = h >= 0 && h < i32(p.pat_rows);
    var v = pat_row(w, ws);
    v.lo = select(vec4<f32>(0.0), v.lo, inside);
    v.hi = select(vec4<f32>(0.0), v.hi, inside);
    var s = a;
    s.r0 = pat_add(s.r0, 0u, r, v, bd);
    s.r1 = pat_add(s.r1, 1u, r, v, bd);
    s.r2 = pat_add(s.r2, 2u, r, v, bd);
    return s;
}

@compute @workgroup_size(WG)
fn aa_pat(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = thread_id(gid, nwg);
    if (t >= p.walk_threads) { return; }
    let wk = walk_of(t, PV);
    let g = wk.g;
    let band = wk.band;
    let ow0 = g * PV;
    var bd: Band;
    bd.plane_in = wk.plane_in;
    bd.plane_out = wk.plane_out;
    bd.b0 = i32(band * p.pat_h.y) + bitcast<i32>(p.pat_h.z);
    bd.oh0 = band * RB;
    bd.kw = i32(g * p.pat_w.y) + bitcast<i32>(p.pat_w.z);
    bd.ncol = min(PV, p.out_sizes.w - ow0);
    bd.inner = bd.kw >= 0 && bd.kw + i32(NWD) <= i32(p.pat_w.w) - select(1, 0, p.pat_last == 0xFFFFFFFFu);
    let ws = pat_weights(g);
    let z = Pair(vec4<f32>(0.0), vec4<f32>(0.0));
    var a = Acc(z, z, z);
    // two rows an iteration, both windows loaded first (H100, against one row an iteration: uint8
    // at 1/3 38.7 -> 32.3 us, float16 43.0 -> 41.7, float32 at 1/2 65.0 -> 66.3; loading the next
    // row's window a row ahead was no faster, float32 at 1/2 74.5 us)
    for (var r = 0u; r < NR; r += 2u) {
        let w0 = pat_load(r, bd);
        let w1 = pat_load(min(r + 1u, NR - 1u), bd);
        a = pat_use(a, r, w0, bd, ws);
        if (r + 1u < NR) { a = pat_use(a, r + 1u, w1, bd, ws); }
    }
}
