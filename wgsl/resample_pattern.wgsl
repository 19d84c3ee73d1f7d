// Resample fast path: the row walk with one W tap pattern (resample_rows_pat_v1, _v2, _v4; the
// suffix is the store width in words), float16 linear. Built on resample_rows.wgsl (included) and
// tested against resample.wgsl's resample_packed. Bindings: as resample_rows.wgsl; _v1 writes
// output, _v2 output2, _v4 output4. Overrides: resample_rows.wgsl's, and PV, NW, TAP0_A-D, TAP1_A-D.

#include "resample_rows.wgsl"

override PV: u32 = 8u;      // outputs per thread: 4, 6, 8, 12 or 16
override NW: u32 = 4u;      // input words in a thread's window: 1 to 6
override TAP0_A: u32 = 0u;  // tap 0 of outputs 0-3: half index in the window, 4 bits at bit 4 (j % 4)
override TAP0_B: u32 = 0u;  // outputs 4-7
override TAP0_C: u32 = 0u;  // outputs 8-11
override TAP0_D: u32 = 0u;  // outputs 12-15
override TAP1_A: u32 = 0u;  // the same for tap 1 (16-bit values: the cache key prints them exactly)
override TAP1_B: u32 = 0u;
override TAP1_C: u32 = 0u;
override TAP1_D: u32 = 0u;

// -- row walk with one W tap pattern (float16 linear) -----------------------------------------------
// resample_rows_half spends most of its time working out, per thread, where its taps lie in the
// input words (a load, a shift and a conversion per tap). Where the W taps of every thread follow
// one pattern (2x: output 8g + j reads elements 4g - 1 + (0, 1, 1, 2, 2, 3, 3, 4)[j] and the next;
// 1.5x with 6 or 12 outputs per thread likewise), the host finds the pattern and makes it
// structure: thread g loads the NW words of its window, from word k = k0 + g * step of the input
// row, converts each once (unpack2x16float) and picks its taps with selects on override constants,
// which the compiler resolves while building the pipeline. The taps that the table clamps at the
// row ends read virtual words (the window may start at word -1 and end one word past the row)
// that repeat the edge element, so tap index, weight and value are the table's everywhere and no
// thread diverges. The host checks every thread's taps against the table; the shader only adds
// table entries and window offsets. Why this is structure and not data: the pattern depends on the
// W scale and pixel offsets alone, not on any size, so one pipeline serves every shape at a given
// scale (the cache key holds PV, NW and the tap nibbles); the weights, sizes and strides stay in
// the table and the uniforms.
// Rows as in resample_rows, but the cache is canonical: va holds the row of H tap 0 and vb the row
// of tap 1, so the vertical blend 0 + wh0 * va + wh1 * vb needs no selects.
// Requirements (host): input row starts even (whole words), W stride 1, W even, PV divides the
// output width.

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

// Half d (0 to 11) of the window words u0..u5, unpacked: d is a constant of the pipeline.
fn pat_half(d: u32, u0: vec2<f32>, u1: vec2<f32>, u2: vec2<f32>, u3: vec2<f32>, u4: vec2<f32>, u5: vec2<f32>) -> f32 {
    let odd = (d & 1u) == 1u;
    var v = select(u0.x, u0.y, odd);
    v = select(v, select(u1.x, u1.y, odd), (d >> 1u) == 1u);
    v = select(v, select(u2.x, u2.y, odd), (d >> 1u) == 2u);
    v = select(v, select(u3.x, u3.y, odd), (d >> 1u) == 3u);
    v = select(v, select(u4.x, u4.y, odd), (d >> 1u) == 4u);
    v = select(v, select(u5.x, u5.y, odd), (d >> 1u) == 5u);
    return v;
}

// Window half of tap t (0 or 1) of output j.
fn pat_d(j: u32, t: u32) -> u32 {
    var m = select(TAP0_A, TAP1_A, t == 1u);
    if (j >= 4u) { m = select(TAP0_B, TAP1_B, t == 1u); }
    if (j >= 8u) { m = select(TAP0_C, TAP1_C, t == 1u); }
    if (j >= 12u) { m = select(TAP0_D, TAP1_D, t == 1u); }
    return (m >> (4u * (j & 3u))) & 15u;
}

// Tap t of outputs 4q .. 4q + 3.
fn pat_quad(q: u32, t: u32, u0: vec2<f32>, u1: vec2<f32>, u2: vec2<f32>, u3: vec2<f32>, u4: vec2<f32>,
            u5: vec2<f32>) -> vec4<f32> {
    return vec4<f32>(pat_half(pat_d(4u * q, t), u0, u1, u2, u3, u4, u5),
                     pat_half(pat_d(4u * q + 1u, t), u0, u1, u2, u3, u4, u5),
                     pat_half(pat_d(4u * q + 2u, t), u0, u1, u2, u3, u4, u5),
                     pat_half(pat_d(4u * q + 3u, t), u0, u1, u2, u3, u4, u5));
}

// Word j of a thread's window on the input row whose first word is rw. Only the first word can
// lie before the row (k = -1) and only the last one past it: those loads are clamped into the row
// and the word replaced by its edge element, twice.
fn pat_word(rw: i32, j: u32, t: PatThread) -> u32 {
    let wh = i32(p.pat_row_words);
    var at = t.k + i32(j);
    if (j == 0u) { at = max(at, 0); }
    if (j == NW - 1u) { at = min(at, wh - 1); }
    var x = input[u32(rw + at)];
    if (j == 0u) { x = select(x, (x & 0xFFFFu) * 0x10001u, t.k < 0); }
    if (j == NW - 1u) { x = select(x, (x >> 16u) * 0x10001u, t.k + i32(j) >= wh); }
    return x;
}

// The PV outputs of a thread interpolated along W on the input row starting at element `row`.
fn pat_fetch(row: u32, t: PatThread) -> Row16 {
    let rw = i32(row >> 1u);
    let u0 = unpack2x16float(pat_word(rw, 0u, t));
    var u1 = vec2<f32>(0.0);
    var u2 = vec2<f32>(0.0);
    var u3 = vec2<f32>(0.0);
    var u4 = vec2<f32>(0.0);
    var u5 = vec2<f32>(0.0);
    if (NW > 1u) { u1 = unpack2x16float(pat_word(rw, 1u, t)); }
    if (NW > 2u) { u2 = unpack2x16float(pat_word(rw, 2u, t)); }
    if (NW > 3u) { u3 = unpack2x16float(pat_word(rw, 3u, t)); }
    if (NW > 4u) { u4 = unpack2x16float(pat_word(rw, 4u, t)); }
    if (NW > 5u) { u5 = unpack2x16float(pat_word(rw, 5u, t)); }
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
}

// Output row oh of a thread's PV columns.
fn pat_row(c: ptr<function, PatWalk>, oh: u32, base: u32, t: PatThread) -> Row16 {
    let eh = table4[p.table_start.z + oh];
    let r0 = base + eh.x;
    if (p.taps.z == 1u) {
        if (r0 != (*c).ra) {
            (*c).va = pat_fetch(r0, t);
            (*c).ra = r0;
        }
        return pat_blend(bitcast<f32>(eh.z), (*c).va, 0.0, (*c).va, false);
    }
    let r1 = base + eh.y;
    if (r0 != (*c).ra || r1 != (*c).rb) {
        if (r0 == (*c).rb) {
            (*c).va = (*c).vb;
            (*c).ra = (*c).rb;
        } else if (r0 != (*c).ra) {
            (*c).va = pat_fetch(r0, t);
            (*c).ra = r0;
        }
        if (r1 == (*c).ra) {
            (*c).vb = (*c).va;
            (*c).rb = (*c).ra;
        } else if (r1 != (*c).rb) {
            (*c).vb = pat_fetch(r1, t);
            (*c).rb = r1;
        }
    }
    return pat_blend(bitcast<f32>(eh.z), (*c).va, bitcast<f32>(eh.w), (*c).vb, true);
}

// Where a thread of resample_rows_pat works: its band's rows, its first output element (tensor
// index, without the output base), the input element of its (n, c) plane and its W window.
struct PatPlace {
    oh0: u32,
    oh1: u32,
    e: u32,
    base: u32,
    t: PatThread,
}

// W weights of outputs 4q .. 4q + 3 of a thread whose first table entry is tw (w0 or w1: which).
fn pat_weights(tw: u32, q: u32, which: u32) -> vec4<f32> {
    let t0 = table4[tw + 4u * q];
    let t1 = table4[tw + 4u * q + 1u];
    let t2 = table4[tw + 4u * q + 2u];
    let t3 = table4[tw + 4u * q + 3u];
    if (which == 0u) { return bitcast<vec4<f32>>(vec4<u32>(t0.z, t1.z, t2.z, t3.z)); }
    return bitcast<vec4<f32>>(vec4<u32>(t0.w, t1.w, t2.w, t3.w));
}

fn pat_place(tid: u32) -> PatPlace {
    let rp = rows_place(tid, PV);   // (its dst and step are for stores of PV elements: unused here)
    let n = rp.n;
    let c = rp.c;
    let ow = rp.ow;
    let e = (((n - p.origin.x) * p.out_sizes.y + c - p.origin.y) * p.out_sizes.z + rp.oh0) * p.out_sizes.w + ow;
    let base = p.input_base + table[4u * (p.table_start.x + n)] + table4[p.table_start.y + c].x;
    let tw = p.table_start.w + ow;
    let z = vec4<f32>(0.0);
    var w0 = Row16(pat_weights(tw, 0u, 0u), z, z, z);
    var w1 = Row16(pat_weights(tw, 0u, 1u), z, z, z);
    if (PV == 6u) {
        // outputs 4 and 5 (the other two lanes multiply values that are never stored)
        let t4 = table4[tw + 4u];
        let t5 = table4[tw + 5u];
        w0.b = bitcast<vec4<f32>>(vec4<u32>(t4.z, t5.z, t5.z, t5.z));
        w1.b = bitcast<vec4<f32>>(vec4<u32>(t4.w, t5.w, t5.w, t5.w));
    } else if (PV > 4u) {
        w0.b = pat_weights(tw, 1u, 0u);
        w1.b = pat_weights(tw, 1u, 1u);
    }
    if (PV > 8u) {
        w0.c = pat_weights(tw, 2u, 0u);
        w1.c = pat_weights(tw, 2u, 1u);
    }
    if (PV > 12u) {
        w0.d = pat_weights(tw, 3u, 0u);
        w1.d = pat_weights(tw, 3u, 1u);
    }
    let k = p.pat_k0 + i32(ow / PV) * i32(p.pat_step);
    return PatPlace(rp.oh0, rp.oh1, e, base, PatThread(k, w0, w1));
}

fn pat_walk() -> PatWalk {
    let z = vec4<f32>(0.0);
    return PatWalk(0xFFFFFFFFu, 0xFFFFFFFFu, Row16(z, z, z, z), Row16(z, z, z, z));
}

// The row walk's entry points, one per output binding (the stores of a row as PV says):
// 8-byte stores (output2) for PV = 4 and 12, words (output) for PV = 6, 16-byte stores
// (output4) for PV = 8 and 16.
@compute @workgroup_size(WG)
fn resample_rows_pat_v2(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let tid = thread_id(gid, nwg);
    if (tid >= p.row_threads) { return; }
    let pl = pat_place(tid);
    var c = pat_walk();
    var dst = (p.output_base + pl.e) / 4u;
    for (var oh = pl.oh0; oh < pl.oh1; oh++) {
        let v = pat_row(&c, oh, pl.base, pl.t);
        output2[dst] = vec2<u32>(pack2x16float(v.a.xy), pack2x16float(v.a.zw));
        if (PV == 12u) {
            output2[dst + 1u] = vec2<u32>(pack2x16float(v.b.xy), pack2x16float(v.b.zw));
            output2[dst + 2u] = vec2<u32>(pack2x16float(v.c.xy), pack2x16float(v.c.zw));
        }
        dst += p.out_sizes.w / 4u;
    }
}

@compute @workgroup_size(WG)
fn resample_rows_pat_v1(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let tid = thread_id(gid, nwg);
    if (tid >= p.row_threads) { return; }
    let pl = pat_place(tid);
    var c = pat_walk();
    var dst = (p.output_base + pl.e) / 2u;
    for (var oh = pl.oh0; oh < pl.oh1; oh++) {
        let v = pat_row(&c, oh, pl.base, pl.t);
        output[dst] = pack2x16float(v.a.xy);
        output[dst + 1u] = pack2x16float(v.a.zw);
        output[dst + 2u] = pack2x16float(v.b.xy);
        dst += p.out_sizes.w / 2u;
    }
}

@compute @workgroup_size(WG)
fn resample_rows_pat_v4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let tid = thread_id(gid, nwg);
    if (tid >= p.row_threads) { return; }
    let pl = pat_place(tid);
    var c = pat_walk();
    var dst = (p.output_base + pl.e) / 8u;
    for (var oh = pl.oh0; oh < pl.oh1; oh++) {
        let v = pat_row(&c, oh, pl.base, pl.t);
        output4[dst] = vec4<u32>(pack2x16float(v.a.xy), pack2x16float(v.a.zw), pack2x16float(v.b.xy),
                                 pack2x16float(v.b.zw));
        if (PV == 16u) {
            output4[dst + 1u] = vec4<u32>(pack2x16float(v.c.xy), pack2x16float(v.c.zw), pack2x16float(v.d.xy),
                                          pack2x16float(v.d.zw));
        }
        dst += p.out_sizes.w / 8u;
    }
}
