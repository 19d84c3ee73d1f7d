// Resample fast path: the row walk with one W tap pattern (resample_rows_pat), linear (every type)
// and nearest. Built on resample_rows.wgsl (included) and tested against resample.wgsl's
// resample_packed. Bindings: as resample_rows.wgsl (it writes output, output2 and output4). Overrides: resample_rows.wgsl's (ROW_PLANES: the
// batch and/or channel interpolated, their windows blended; COMPUTED: long axes whose coordinates
// the shader computes, bit 3 the W axis's weights), and PV, NW, TAP0_A-D, TAP1_A-D, PAT_CL.

#include "resample_rows.wgsl"

override PV: u32 = 8u;      // outputs per thread: 4, 5, 6, 8, 10, 12 or 16 (whole words of output)
override NW: u32 = 4u;      // input words in a thread's window: 1 to 6 (at most 16 elements)
override TAP0_A: u32 = 0u;  // tap 0 of outputs 0-3: element index in the window, 4 bits at bit 4 (j % 4)
override TAP0_B: u32 = 0u;  // outputs 4-7
override TAP0_C: u32 = 0u;  // outputs 8-11
override TAP0_D: u32 = 0u;  // outputs 12-15
override TAP1_A: u32 = 0u;  // the same for tap 1 (16-bit values: the cache key prints them exactly)
override TAP1_B: u32 = 0u;
override TAP1_C: u32 = 0u;
override TAP1_D: u32 = 0u;
// Channels in the lanes (a channels-fastest float32 input, e.g. NHWC): a warp is PAT_CL channels x
// 32 / PAT_CL block columns, so that its window loads are runs of PAT_CL channels and its stores
// runs of 32 / PAT_CL threads' outputs in each of PAT_CL planes (1: off, block columns in the lanes).
override PAT_CL: u32 = 1u;
// 8/16-bit rows that do not start on word boundaries or are not whole words (an odd W, an odd row
// stride, an input placed off a word): each window word is put together from the two aligned words
// it straddles, and at a row's edges lane by lane from the row's elements clamped into it (what the
// table's clamped taps read). Off: rows are whole words from a word boundary, one load a word.
override PAT_BYTES: bool = false;
// 8/16-bit output rows that are not whole words (so a partial last group, and rows that start
// inside a word): a thread's bytes go where they lie; the words it shares with a neighbouring
// thread (the row's groups all start off a word when the row does) merged with atomics on its own
// bytes, its other words stored whole (pat_store_bytes).
override PAT_RAGGED_BYTES: bool = false;
// A computed W axis (a long one) whose weights the host compressed to W_RUNS runs of threads that
// repeat every T threads: the table's W region starts with the runs, (first thread, T, vec4 offset,
// -) each, then each run's first period of weights; 0: computed.
override W_RUNS: u32 = 0u;

// -- row walk with one W tap pattern (linear; nearest below) ----------------------------------------
// resample_rows_half and resample_rows_byte spend most of their time working out, per thread, where
// its taps lie in the input words (a load, a shift and a conversion per tap). Where the W taps of
// every thread follow one pattern (float16 2x: output 8g + j reads elements
// 4g - 1 + (0, 1, 1, 2, 2, 3, 3, 4)[j] and the next; 8-bit 2x likewise with 16 outputs a thread;
// 1.5x with 6 or 12 outputs per thread), the host finds the pattern and makes it
// structure: thread g loads the NW words of its window, from word k = k0 + g * step of the input
// row, converts each once (float32 bits, unpack2x16float, or four byte conversions) and picks its
// taps with selects on override constants,
// which the compiler resolves while building the pipeline. The taps that the table clamps at the
// row ends read virtual words (the window may start at word -1 and end one word past the row)
// that repeat the edge element, so tap index, weight and value are the table's everywhere and no
// thread diverges. The host checks every thread's taps against the table; the shader only adds
// table entries and window offsets. Why this is structure and not data: the pattern depends on the
// W scale and pixel offsets alone, not on any size, so one pipeline serves every shape at a given
// scale (the cache key holds PV, NW and the tap nibbles); the weights (a thread-fastest region of
// the table, see pat_pair), sizes and strides stay in the table and the uniforms.
// Rows as in resample_rows, but the cache is canonical: va holds the row of H tap 0 and vb the row
// of tap 1, so the vertical blend 0 + wh0 * va + wh1 * vb needs no selects.
// Requirements (host): input row starts on whole words, W stride 1 (float32: any, a word being an
// element), W a whole number of words (8/16-bit rows of any length and start: PAT_BYTES), PV
// divides the output width and its outputs are whole words.

// Up to 16 values of a thread's outputs: a (0-3), b (4-7), c (8-11), d (12-15).
struct Row16 {
    a: vec4<f32>,
    b: vec4<f32>,
    c: vec4<f32>,
    d: vec4<f32>,
}

// A thread's first window word, relative to its row start (-1 at the left edge), and the W
// weights of its outputs. Kept this small on purpose: the load offsets and edge masks are
// recomputed per row (a few integer operations); holding them in five more registers measured
// 10 % slower (2x up, PV = 8, on the H100).
struct PatThread {
    k: i32,
    w0: Row16,
    w1: Row16,
}

// Elements a window word holds: 1 (float32), 2 (float16) or 4 (int8, uint8).
fn pat_epw() -> u32 { return 4u / elem_bytes(); }

// Element d (0 to 15) of the window words u0..u5, each converted (pat_convert): d is a constant of
// the pipeline, so the selects resolve when it is built.
fn pat_elem(d: u32, u0: vec4<f32>, u1: vec4<f32>, u2: vec4<f32>, u3: vec4<f32>, u4: vec4<f32>, u5: vec4<f32>) -> f32 {
    let w = d / pat_epw();
    var u = u0;
    u = select(u, u1, w == 1u);
    u = select(u, u2, w == 2u);
    u = select(u, u3, w == 3u);
    u = select(u, u4, w == 4u);
    u = select(u, u5, w == 5u);
    let l = d % pat_epw();
    return select(select(u.x, u.y, l == 1u), select(u.z, u.w, l == 3u), l >= 2u);
}

// A window word's elements as f32 (float32: x; float16: x, y; 8-bit: x, y, z, w, the low byte first).
fn pat_convert(x: u32) -> vec4<f32> {
    if (DTYPE == 0u) { return vec4<f32>(bitcast<f32>(x), 0.0, 0.0, 0.0); }
    if (DTYPE == 1u) { return vec4<f32>(unpack2x16float(x), 0.0, 0.0); }
    if (DTYPE == 2u) { return vec4<f32>(bitcast<vec4<i32>>(vec4<u32>(x) << vec4<u32>(24u, 16u, 8u, 0u)) >> vec4<u32>(24u)); }
    return vec4<f32>((vec4<u32>(x) >> vec4<u32>(0u, 8u, 16u, 24u)) & vec4<u32>(0xFFu));
}

// Window element of tap t (0 or 1) of output j.
fn pat_d(j: u32, t: u32) -> u32 {
    var m = select(TAP0_A, TAP1_A, t == 1u);
    if (j >= 4u) { m = select(TAP0_B, TAP1_B, t == 1u); }
    if (j >= 8u) { m = select(TAP0_C, TAP1_C, t == 1u); }
    if (j >= 12u) { m = select(TAP0_D, TAP1_D, t == 1u); }
    return (m >> (4u * (j & 3u))) & 15u;
}

// Tap t of outputs 4q .. 4q + 3.
fn pat_quad(q: u32, t: u32, u0: vec4<f32>, u1: vec4<f32>, u2: vec4<f32>, u3: vec4<f32>, u4: vec4<f32>,
            u5: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(pat_elem(pat_d(4u * q, t), u0, u1, u2, u3, u4, u5),
                     pat_elem(pat_d(4u * q + 1u, t), u0, u1, u2, u3, u4, u5),
                     pat_elem(pat_d(4u * q + 2u, t), u0, u1, u2, u3, u4, u5),
                     pat_elem(pat_d(4u * q + 3u, t), u0, u1, u2, u3, u4, u5));
}

// Word j of a thread's window on the input row whose first word is rw. A word outside the row
// (the first ones of the first threads, the last ones of the last: the row's edge taps, and the
// outputs past a partial last group) is loaded clamped into the row and replaced by the row's
// edge element in every lane (rows are whole words, so no word straddles an edge).
fn pat_word(row: u32, j: u32, t: PatThread) -> u32 {
    if (PAT_BYTES) { return pat_word_bytes(row, j, t); }
    let rw = i32(row / pat_epw());
    let wh = i32(p.pat_row_words);
    let at = t.k + i32(j);
    // (float32 rows may be strided: a word is an element, input W stride apart; else stride 1)
    var x = input[u32(rw + clamp(at, 0, wh - 1) * select(1, i32(p.in_strides.w), DTYPE == 0u))];
    let bits = elem_bytes() * 8u;
    // an element times this: in every lane
    let fill = select(select(0x01010101u, 0x10001u, DTYPE == 1u), 1u, DTYPE == 0u);
    x = select(x, extractBits(x, 0u, bits) * fill, at < 0);
    x = select(x, (x >> (32u - bits)) * fill, at >= wh);
    return x;
}

// PAT_BYTES: window word j of a thread on the input row whose first element is `row` (any
// element): its epw elements from (k + j) * epw on, relative to the row. Inside the row, two
// aligned words funnel-shifted (one where the word is aligned); at an edge, each lane the row's
// element clamped into [0, W - 1], as the reference clamps the taps there.
fn pat_word_bytes(row: u32, j: u32, t: PatThread) -> u32 {
    let epw = pat_epw();
    let bits = elem_bytes() * 8u;
    let w = i32(p.in_sizes.w);
    let first = (t.k + i32(j)) * i32(epw);
    if (first >= 0 && first + i32(epw) <= w) {
        let e = row + u32(first);
        let sh = (e % epw) * bits;
        let lo = input[e / epw];
        if (sh == 0u) { return lo; }
        return (lo >> sh) | (input[e / epw + 1u] << (32u - sh));   // (the word's last element is in the row)
    }
    var x = raw(row + u32(clamp(first, 0, w - 1)));
    x |= raw(row + u32(clamp(first + 1, 0, w - 1))) << bits;
    if (epw == 4u) {
        x |= raw(row + u32(clamp(first + 2, 0, w - 1))) << 16u;
        x |= raw(row + u32(clamp(first + 3, 0, w - 1))) << 24u;
    }
    return x;
}

// A thread's raw window words on one input row: 0-3 in a, 4-5 in b (words past NW stay 0).
struct PatRaw {
    a: vec4<u32>,
    b: vec2<u32>,
}

// (row: the input row's first element)
fn pat_raw_window(row: u32, t: PatThread) -> PatRaw {
    var x = PatRaw(vec4<u32>(pat_word(row, 0u, t), 0u, 0u, 0u), vec2<u32>(0u));
    if (NW > 1u) { x.a.y = pat_word(row, 1u, t); }
    if (NW > 2u) { x.a.z = pat_word(row, 2u, t); }
    if (NW > 3u) { x.a.w = pat_word(row, 3u, t); }
    if (NW > 4u) { x.b.x = pat_word(row, 4u, t); }
    if (NW > 5u) { x.b.y = pat_word(row, 5u, t); }
    return x;
}

// A thread's window on one input row: its NW words, converted (u0..u5; words past NW stay 0).
struct PatWin {
    u0: vec4<f32>,
    u1: vec4<f32>,
    u2: vec4<f32>,
    u3: vec4<f32>,
    u4: vec4<f32>,
    u5: vec4<f32>,
}

// The window on the input row starting at element `row`.
fn pat_window(row: u32, t: PatThread) -> PatWin {
    let r = pat_raw_window(row, t);
    let z = vec4<f32>(0.0);
    var x = PatWin(pat_convert(r.a.x), z, z, z, z, z);
    if (NW > 1u) { x.u1 = pat_convert(r.a.y); }
    if (NW > 2u) { x.u2 = pat_convert(r.a.z); }
    if (NW > 3u) { x.u3 = pat_convert(r.a.w); }
    if (NW > 4u) { x.u4 = pat_convert(r.b.x); }
    if (NW > 5u) { x.u5 = pat_convert(r.b.y); }
    return x;
}

// acc + w * x over the window's words (input planes blended before the W taps: linear, so the
// same sum in another order).
fn pat_axpy(acc: PatWin, w: f32, x: PatWin) -> PatWin {
    var r = acc;
    r.u0 += w * x.u0;
    if (NW > 1u) { r.u1 += w * x.u1; }
    if (NW > 2u) { r.u2 += w * x.u2; }
    if (NW > 3u) { r.u3 += w * x.u3; }
    if (NW > 4u) { r.u4 += w * x.u4; }
    if (NW > 5u) { r.u5 += w * x.u5; }
    return r;
}

// The window at row offset `row` of the thread's input planes (resample_rows.wgsl's Planes: with
// the batch and/or channel interpolated (ROW_PLANES 2 or 4), their windows weighted by wn * wc
// and summed in the reference's plane order).
fn pat_planes(row: u32, ps: Planes, t: PatThread) -> PatWin {
    if (ROW_PLANES == 1u) { return pat_window(ps.b.x + row, t); }
    let z = vec4<f32>(0.0);
    var x = pat_axpy(PatWin(z, z, z, z, z, z), ps.w.x, pat_window(ps.b.x + row, t));
    if (p.taps.y == 2u) { x = pat_axpy(x, ps.w.y, pat_window(ps.b.y + row, t)); }
    if (ROW_PLANES == 4u || p.taps.y == 1u) { x = pat_axpy(x, ps.w.z, pat_window(ps.b.z + row, t)); }
    if (ROW_PLANES == 4u) { x = pat_axpy(x, ps.w.w, pat_window(ps.b.w + row, t)); }
    return x;
}

// The PV outputs of a thread interpolated along W at row offset `row` of its input planes.
fn pat_fetch(row: u32, ps: Planes, t: PatThread) -> Row16 {
    let x = pat_planes(row, ps, t);
    let u0 = x.u0;
    let u1 = x.u1;
    let u2 = x.u2;
    let u3 = x.u3;
    let u4 = x.u4;
    let u5 = x.u5;
    var r = Row16(pat_quad(0u, 0u, u0, u1, u2, u3, u4, u5), vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
    if (PV > 4u) { r.b = pat_quad(1u, 0u, u0, u1, u2, u3, u4, u5); }
    if (PV > 8u) { r.c = pat_quad(2u, 0u, u0, u1, u2, u3, u4, u5); }
    if (PV > 12u) { r.d = pat_quad(3u, 0u, u0, u1, u2, u3, u4, u5); }
    if (p.taps.w == 1u) { return r; }
    r.a = t.w0.a * r.a + t.w1.a * pat_quad(0u, 1u, u0, u1, u2, u3, u4, u5);
    if (PV > 4u) { r.b = t.w0.b * r.b + t.w1.b * pat_quad(1u, 1u, u0, u1, u2, u3, u4, u5); }
    if (PV > 8u) { r.c = t.w0.c * r.c + t.w1.c * pat_quad(2u, 1u, u0, u1, u2, u3, u4, u5); }
    if (PV > 12u) { r.d = t.w0.d * r.d + t.w1.d * pat_quad(3u, 1u, u0, u1, u2, u3, u4, u5); }
    return r;
}

// 0 + wh0 * a (+ wh1 * b): the reference's vertical sum, for the outputs the thread has.
fn pat_blend(wh0: f32, a: Row16, wh1: f32, b: Row16, two: bool) -> Row16 {
    var r = Row16(vec4<f32>(0.0) + wh0 * a.a, vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
    if (PV > 4u) { r.b = vec4<f32>(0.0) + wh0 * a.b; }
    if (PV > 8u) { r.c = vec4<f32>(0.0) + wh0 * a.c; }
    if (PV > 12u) { r.d = vec4<f32>(0.0) + wh0 * a.d; }
    if (two) {
        r.a += wh1 * b.a;
        if (PV > 4u) { r.b += wh1 * b.b; }
        if (PV > 8u) { r.c += wh1 * b.c; }
        if (PV > 12u) { r.d += wh1 * b.d; }
    }
    return r;
}

// The two W-interpolated input rows of the last output row: ra/va of its H tap 0, rb/vb of tap 1.
struct PatWalk {
    ra: u32,
    rb: u32,
    va: Row16,
    vb: Row16,
    raw: PatRaw,     // nearest (MODE 0): the raw window of row ra
}

// Output row oh of a thread's PV columns.
fn pat_row(c: ptr<function, PatWalk>, oh: u32, ps: Planes, t: PatThread) -> Row16 {
    let eh = linear_entry(2u, oh);
    let r0 = eh.x;   // row offsets in the planes (the same in each)
    if (p.taps.z == 1u) {
        if (r0 != (*c).ra) {
            (*c).va = pat_fetch(r0, ps, t);
            (*c).ra = r0;
        }
        return pat_blend(bitcast<f32>(eh.z), (*c).va, 0.0, (*c).va, false);
    }
    let r1 = eh.y;
    if (r0 != (*c).ra || r1 != (*c).rb) {
        if (r0 == (*c).rb) {
            (*c).va = (*c).vb;
            (*c).ra = (*c).rb;
        } else if (r0 != (*c).ra) {
            (*c).va = pat_fetch(r0, ps, t);
            (*c).ra = r0;
        }
        if (r1 == (*c).ra) {
            (*c).vb = (*c).va;
            (*c).rb = (*c).ra;
        } else if (r1 != (*c).rb) {
            (*c).vb = pat_fetch(r1, ps, t);
            (*c).rb = r1;
        }
    }
    return pat_blend(bitcast<f32>(eh.z), (*c).va, bitcast<f32>(eh.w), (*c).vb, true);
}

// Where a thread of resample_rows_pat works: its band's rows, its first output element (tensor
// index, without the output base), its input planes (the first element of each) and its W window.
struct PatPlace {
    oh0: u32,
    oh1: u32,
    e: u32,
    ow: u32,
    ps: Planes,
    t: PatThread,
}

// W weights of a thread's outputs 2m and 2m + 1 (its first output column ow, block column g),
// (w0, w1, w0, w1): the plan appends them to the table thread-fastest (vec4
// p.pat_w_start + m * row_blocks + g), so that a warp's loads of them are contiguous (its
// outputs' own table entries lie PV entries apart from lane to lane: 32 cache lines a warp load);
// a long W axis (COMPUTED bit 3) computes them as resample.wgsl's computed_linear does, unless
// the host compressed them to runs (W_RUNS: the thread's place in its run, pat_run_of).
fn pat_pair(g: u32, ow: u32, m: u32) -> vec4<f32> {
    if ((COMPUTED & 8u) != 0u) {
        if (W_RUNS > 0u) {
            let wr = pat_run_of(g);
            return bitcast<vec4<f32>>(table4[p.pat_w_start + wr.x + m * wr.y]);
        }
        let a = computed_linear(3u, ow + 2u * m);
        let b = computed_linear(3u, ow + 2u * m + 1u);
        return bitcast<vec4<f32>>(vec4<u32>(a.z, a.w, b.z, b.w));
    }
    return bitcast<vec4<f32>>(table4[p.pat_w_start + m * p.row_blocks + g]);
}

// W_RUNS: the thread's (first vec4 of its weights past p.pat_w_start, the run's period T), from
// the last run that starts at or before block column g (runs in order, the first at 0). (A first
// form, a loop called once a thread outside the COMPUTED branch, made the whole-table pipelines,
// W_RUNS 0, 6-15 % slower on the H200; this one, inside the branch and written out, does not.
// Which of the two mattered was not isolated.)
fn pat_run_of(g: u32) -> vec2<u32> {
    let s = p.pat_w_start;
    var r = table4[s];
    if (W_RUNS > 1u) { let c = table4[s + 1u]; if (g >= c.x) { r = c; } }
    if (W_RUNS > 2u) { let c = table4[s + 2u]; if (g >= c.x) { r = c; } }
    if (W_RUNS > 3u) { let c = table4[s + 3u]; if (g >= c.x) { r = c; } }
    if (W_RUNS > 4u) { let c = table4[s + 4u]; if (g >= c.x) { r = c; } }
    if (W_RUNS > 5u) { let c = table4[s + 5u]; if (g >= c.x) { r = c; } }
    if (W_RUNS > 6u) { let c = table4[s + 6u]; if (g >= c.x) { r = c; } }
    if (W_RUNS > 7u) { let c = table4[s + 7u]; if (g >= c.x) { r = c; } }
    return vec2<u32>(W_RUNS + r.z + (g - r.x) % r.y, r.y);
}

fn pat_place(tid: u32) -> PatPlace {
    var id = tid;
    if (PAT_CL > 1u) {
        // (channel, block column) lanes to the row walk's order ((n, c, band) planes, g fastest);
        // the plan checks that PAT_CL divides the channels and 32 / PAT_CL the block columns
        let gl = 32u / PAT_CL;
        var r = tid / 32u;
        let g = (r % (p.row_blocks / gl)) * gl + (tid / PAT_CL) % gl;
        r = r / (p.row_blocks / gl);
        let c = (r % (p.out_sizes.y / PAT_CL)) * PAT_CL + tid % PAT_CL;
        r = r / (p.out_sizes.y / PAT_CL);
        let band = r % p.row_bands;
        let n = r / p.row_bands;
        id = ((n * p.out_sizes.y + c) * p.row_bands + band) * p.row_blocks + g;
    }
    let rp = rows_place(id, PV);   // (its dst and step are for stores of PV elements: unused here)
    let n = rp.n;
    let c = rp.c;
    let ow = rp.ow;
    let g = ow / PV;
    let e = (((n - p.origin.x) * p.out_sizes.y + c - p.origin.y) * p.out_sizes.z + rp.oh0) * p.out_sizes.w + ow;
    let z = vec4<f32>(0.0);
    let k = p.pat_k0 + i32(g) * i32(p.pat_step);
    if (MODE == 0u) {   // nearest: the (n, c) plane's first element, no weights
        let base = p.input_base + nearest_entry(0u, n) + nearest_entry(1u, c);
        let ps = Planes(vec4<u32>(base), vec4<f32>(1.0));
        return PatPlace(rp.oh0, rp.oh1, e, ow, ps, PatThread(k, Row16(z, z, z, z), Row16(z, z, z, z)));
    }
    let x0 = pat_pair(g, ow, 0u);
    let x1 = pat_pair(g, ow, 1u);
    var w0 = Row16(vec4<f32>(x0.x, x0.z, x1.x, x1.z), z, z, z);
    var w1 = Row16(vec4<f32>(x0.y, x0.w, x1.y, x1.w), z, z, z);
    if (PV == 5u || PV == 6u) {
        // outputs 4 and 5 (the other lanes multiply values that are never stored)
        let x2 = pat_pair(g, ow, 2u);
        w0.b = vec4<f32>(x2.x, x2.z, x2.z, x2.z);
        w1.b = vec4<f32>(x2.y, x2.w, x2.w, x2.w);
    } else if (PV > 4u) {
        let x2 = pat_pair(g, ow, 2u);
        let x3 = pat_pair(g, ow, 3u);
        w0.b = vec4<f32>(x2.x, x2.z, x3.x, x3.z);
        w1.b = vec4<f32>(x2.y, x2.w, x3.y, x3.w);
    }
    if (PV == 10u) {
        // outputs 8 and 9 (as PV 6's 4 and 5)
        let x4 = pat_pair(g, ow, 4u);
        w0.c = vec4<f32>(x4.x, x4.z, x4.z, x4.z);
        w1.c = vec4<f32>(x4.y, x4.w, x4.w, x4.w);
    } else if (PV > 8u) {
        let x4 = pat_pair(g, ow, 4u);
        let x5 = pat_pair(g, ow, 5u);
        w0.c = vec4<f32>(x4.x, x4.z, x5.x, x5.z);
        w1.c = vec4<f32>(x4.y, x4.w, x5.y, x5.w);
    }
    if (PV > 12u) {
        let x6 = pat_pair(g, ow, 6u);
        let x7 = pat_pair(g, ow, 7u);
        w0.d = vec4<f32>(x6.x, x6.z, x7.x, x7.z);
        w1.d = vec4<f32>(x6.y, x6.w, x7.y, x7.w);
    }
    return PatPlace(rp.oh0, rp.oh1, e, ow, planes(rp, p.input_base), PatThread(k, w0, w1));
}

fn pat_walk() -> PatWalk {
    let z = vec4<f32>(0.0);
    return PatWalk(0xFFFFFFFFu, 0xFFFFFFFFu, Row16(z, z, z, z), Row16(z, z, z, z), PatRaw(vec4<u32>(0u), vec2<u32>(0u)));
}

// A thread's outputs as output words (float32 one a word, float16 two, int8 / uint8 four, rounded and saturated
// as store_bits does): words 0-3 in lo, 4-7 in hi; pat_tw() of them are stored.
struct PatWords {
    lo: vec4<u32>,
    hi: vec4<u32>,
}

fn pat_words(v: Row16) -> PatWords {
    if (DTYPE == 0u) { return PatWords(bitcast<vec4<u32>>(v.a), bitcast<vec4<u32>>(v.b)); }
    if (DTYPE == 1u) {
        return PatWords(vec4<u32>(pack2x16float(v.a.xy), pack2x16float(v.a.zw), pack2x16float(v.b.xy), pack2x16float(v.b.zw)),
                        vec4<u32>(pack2x16float(v.c.xy), pack2x16float(v.c.zw), pack2x16float(v.d.xy), pack2x16float(v.d.zw)));
    }
    return PatWords(vec4<u32>(bytes4(v.a), bytes4(v.b), bytes4(v.c), bytes4(v.d)), vec4<u32>(0u));
}

// -- nearest (MODE 0): raw bits ----------------------------------------------------------------
// The same walk with tap 0 of the pattern (TAP0_*: the nearest input element of each output) and
// no arithmetic: each output element's bits are taken from the window's raw words, so every bit
// pattern (a NaN's payload included) moves unchanged. A row is fetched where the H table's entry
// (nearest: one word, the row's offset) changes.

// Bits of window element d (a constant of the pipeline) of raw words a (0-3) and b (4-5).
fn pat_raw(d: u32, a: vec4<u32>, b: vec2<u32>) -> u32 {
    let w = d / pat_epw();
    var u = a.x;
    u = select(u, a.y, w == 1u);
    u = select(u, a.z, w == 2u);
    u = select(u, a.w, w == 3u);
    u = select(u, b.x, w == 4u);
    u = select(u, b.y, w == 5u);
    if (DTYPE == 0u) { return u; }
    let bits = elem_bytes() * 8u;
    return extractBits(u, (d % pat_epw()) * bits, bits);
}

// Output word i (a constant) of the thread's nearest outputs from the raw window.
fn pat_raw_word(i: u32, a: vec4<u32>, b: vec2<u32>) -> u32 {
    let j = i * pat_epw();   // its first output
    if (DTYPE == 0u) { return pat_raw(pat_d(j, 0u), a, b); }
    if (DTYPE == 1u) { return pat_raw(pat_d(j, 0u), a, b) | (pat_raw(pat_d(j + 1u, 0u), a, b) << 16u); }
    return pat_raw(pat_d(j, 0u), a, b) | (pat_raw(pat_d(j + 1u, 0u), a, b) << 8u)
        | (pat_raw(pat_d(j + 2u, 0u), a, b) << 16u) | (pat_raw(pat_d(j + 3u, 0u), a, b) << 24u);
}

// Output row oh of a nearest thread (its (n, c) plane at ps.b.x).
fn pat_near_row(c: ptr<function, PatWalk>, oh: u32, ps: Planes, t: PatThread) -> PatWords {
    let r = nearest_entry(2u, oh);
    if (r != (*c).ra) {
        (*c).raw = pat_raw_window(ps.b.x + r, t);
        (*c).ra = r;
    }
    let a = (*c).raw.a;
    let b = (*c).raw.b;
    return PatWords(vec4<u32>(pat_raw_word(0u, a, b), pat_raw_word(1u, a, b), pat_raw_word(2u, a, b), pat_raw_word(3u, a, b)),
                    vec4<u32>(pat_raw_word(4u, a, b), pat_raw_word(5u, a, b), pat_raw_word(6u, a, b), pat_raw_word(7u, a, b)));
}

// Output row oh of a thread, as output words: linear (MODE 1) or nearest (MODE 0).
fn pat_out(c: ptr<function, PatWalk>, oh: u32, pl: PatPlace) -> PatWords {
    if (MODE == 0u) { return pat_near_row(c, oh, pl.ps, pl.t); }
    return pat_words(pat_row(c, oh, pl.ps, pl.t));
}

// Output words a thread stores a row: 1, 2, 3, 4, 5, 6 or 8.
fn pat_tw() -> u32 { return PV * elem_bytes() / 4u; }

// RAGGED: a thread's output words from element e (column ow) on, those inside the row: one or two
// 16-byte stores where it has whole vectors inside the row on 16-byte boundaries, else 8-byte
// pairs where aligned, else words (written out: no vector indexed by a variable).
fn pat_store_ragged(e: u32, ow: u32, x: PatWords) {
    let tw = pat_tw();
    let w0 = (p.output_base + e) / pat_epw();
    let n = min(tw, (p.out_sizes.w - ow) / pat_epw());   // words inside the row
    if (n == tw && tw % 4u == 0u && w0 % 4u == 0u) {
        output4[w0 / 4u] = x.lo;
        if (tw == 8u) { output4[w0 / 4u + 1u] = x.hi; }
        return;
    }
    if (w0 % 2u == 0u) {
        if (n > 1u) { output2[w0 / 2u] = x.lo.xy; } else { output[w0] = x.lo.x; }
        if (n > 3u) { output2[w0 / 2u + 1u] = x.lo.zw; } else if (n > 2u) { output[w0 + 2u] = x.lo.z; }
        if (n > 5u) { output2[w0 / 2u + 2u] = x.hi.xy; } else if (n > 4u) { output[w0 + 4u] = x.hi.x; }
        if (n > 7u) { output2[w0 / 2u + 3u] = x.hi.zw; } else if (n > 6u) { output[w0 + 6u] = x.hi.z; }
        return;
    }
    output[w0] = x.lo.x;
    if (n > 1u) { output[w0 + 1u] = x.lo.y; }
    if (n > 2u) { output[w0 + 2u] = x.lo.z; }
    if (n > 3u) { output[w0 + 3u] = x.lo.w; }
    if (n > 4u) { output[w0 + 4u] = x.hi.x; }
    if (n > 5u) { output[w0 + 5u] = x.hi.y; }
    if (n > 6u) { output[w0 + 6u] = x.hi.z; }
    if (n > 7u) { output[w0 + 7u] = x.hi.w; }
}

// Word k of a thread's output words (0 from pat_tw() on): lane masks, no vector indexed by a variable.
fn pat_word_k(x: PatWords, k: u32) -> u32 {
    let lanes = vec4<u32>(0u, 1u, 2u, 3u);
    let v = dot(x.lo, select(vec4<u32>(0u), vec4<u32>(1u), lanes == vec4<u32>(k)))
        + dot(x.hi, select(vec4<u32>(0u), vec4<u32>(1u), lanes + 4u == vec4<u32>(k)));
    return select(v, 0u, k >= pat_tw());
}

// PAT_RAGGED_BYTES: the thread's outputs inside the row (from element e, column ow), its bytes
// shifted to where they lie: a word wholly its own stored, a word it shares (with the group before
// or after it, or the next row) merged with atomics on its own bytes only.
fn pat_store_bytes(e: u32, ow: u32, x: PatWords) {
    let eb = elem_bytes();
    let b0 = (p.output_base + e) * eb;
    let b1 = b0 + min(PV, p.out_sizes.w - ow) * eb;
    let s = (b0 & 3u) * 8u;
    let w0 = b0 >> 2u;
    for (var k = 0u; k <= pat_tw(); k++) {
        var v = pat_word_k(x, k);
        // (k - 1 wraps for k = 0: pat_word_k gives 0 there, the word before the thread's first)
        if (s != 0u) { v = (v << s) | (pat_word_k(x, k - 1u) >> (32u - s)); }
        put_span(w0 + k, v, b0, b1);
    }
}

// A thread's output words of one row, from element e (column ow) on: 16-byte stores where a
// thread stores 4 or 8 words, 8-byte ones for 2 or 6, words for 1 or 3 (rows of whole groups
// start on 16-byte boundaries: the plan's condition); RAGGED rows as pat_store_ragged says.
fn pat_store(e: u32, ow: u32, x: PatWords) {
    if (PAT_RAGGED_BYTES) {
        pat_store_bytes(e, ow, x);
        return;
    }
    if (RAGGED) {
        pat_store_ragged(e, ow, x);
        return;
    }
    let tw = pat_tw();
    let w0 = (p.output_base + e) / pat_epw();
    if (tw % 4u == 0u) {
        output4[w0 / 4u] = x.lo;
        if (tw == 8u) { output4[w0 / 4u + 1u] = x.hi; }
    } else if (tw % 2u == 0u) {
        output2[w0 / 2u] = x.lo.xy;
        if (tw == 6u) {
            output2[w0 / 2u + 1u] = x.lo.zw;
            output2[w0 / 2u + 2u] = x.hi.xy;
        }
    } else if (tw == 5u) {
        // (groups of 5 words start on any word: word stores)
        output[w0] = x.lo.x;
        output[w0 + 1u] = x.lo.y;
        output[w0 + 2u] = x.lo.z;
        output[w0 + 3u] = x.lo.w;
        output[w0 + 4u] = x.hi.x;
    } else {
        output[w0] = x.lo.x;
        if (tw == 3u) {
            output[w0 + 1u] = x.lo.y;
            output[w0 + 2u] = x.lo.z;
        }
    }
}

// The pattern walk: thread = (n, c, band, block column), each output row of its band stored as
// pat_store says (every output view named: output, output2, output4).
@compute @workgroup_size(WG)
fn resample_rows_pat(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let tid = thread_id(gid, nwg);
    if (tid >= p.row_threads) { return; }
    let pl = pat_place(tid);
    var c = pat_walk();
    for (var oh = pl.oh0; oh < pl.oh1; oh++) {
        pat_store(pl.e + (oh - pl.oh0) * p.out_sizes.w, pl.ow, pat_out(&c, oh, pl));
    }
}
