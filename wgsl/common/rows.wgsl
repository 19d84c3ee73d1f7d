// Output-row kernels shared by DepthToSpace and SpaceToDepth: the general fast path.
//
// Both operators write output rows that are contiguous (output w stride 1) whatever the input
// layout, block size, element size or row alignment. Row r starts at output element dst(r) and
// input element src(r) (the operator's file defines row_at(r), the spec formula for its rows),
// and element q of the row comes from input element
//     src(r) + (q % ILV) * rw.stride_j + (q / ILV) * rw.stride_w
// (DepthToSpace interleaves ILV = b input rows into one output row; SpaceToDepth reads one input
// row with stride b, ILV = 1). Two entry-point bodies:
//   rows_body       one thread per BPT whole 16-byte blocks of an output row (the row's "interior":
//                   blocks wholly inside the row), built in registers and stored as one vec4, so
//                   stores are full width and no two threads write one word. Block k of a row goes
//                   to thread k % (threads a row), so the threads of a warp store consecutive
//                   blocks with every store instruction (coalesced), and BPT > 1 spreads the row
//                   index arithmetic over several blocks. Rows need not be 16-byte aligned.
//   row_edges_body  the elements of each row outside its interior (the head before the first whole
//                   block and the tail after the last; the whole row when it has none), one thread
//                   per word of those bytes: a word wholly inside the row is stored, a shared one is
//                   merged with atomics, because its other bytes belong to other rows (written by
//                   other threads) or to no element.
//   row_words_body  4- and 8-byte elements only: one thread per BPT chunks of 16 bytes of a row,
//                   counted from the row's first element (no alignment needed), each element
//                   stored as its own word(s) through `output`. Every word of such a row belongs to
//                   one of its elements, so there is no edge pass and no atomic; CPU adapters take
//                   it for rows that the row kernel would finish with the edge pass.
//   row_words_shared_body  its form for 1- and 2-byte elements: whole words stored plainly, a row's
//                   two end words (shared with neighbouring rows) merged with atomics.
//   staged_body     input rows contiguous (w stride 1): a workgroup stages whole input words of
//                   its units in workgroup memory with coalesced word loads, then builds every
//                   output word of them from there and stores it (a word its segment does not fill
//                   merged with atomics). A unit is `tw` columns of one group: DepthToSpace's
//                   output row (STAGE_RUNS = b input runs, one output segment), SpaceToDepth's
//                   input row (one input run, STAGE_SEGS = b output rows). On a GPU the row
//                   kernel's one global load per element is the bound for 1- and 2-byte elements.
// The plan runs row_edges only when some row does not start and end on a 16-byte boundary.
// Bindings: common/permute.wgsl's input (u32 words), output4 (vec4 words), output (u32 words),
// output_atomic, and 8 uniforms (Rows).

#include "common/permute.wgsl"
// (merge_word: staged_body's words)
#include "common/merge.wgsl"

override ILV: u32 = 1u;   // input rows interleaved into one output row
override BPT: u32 = 1u;   // interior blocks per thread
override STAGE_RUNS: u32 = 1u;  // staged_body: input runs a unit (DepthToSpace b, SpaceToDepth 1)
override STAGE_SEGS: u32 = 1u;  //   output segments a unit (DepthToSpace 1, SpaceToDepth b)
override STAGE_SW: u32 = 1u;    //   input elements a column of a run (DepthToSpace 1, SpaceToDepth b)
const STAGE_WORDS = 2048u;      //   workgroup memory for staged input words (8 KiB)

var<workgroup> stage: array<u32, STAGE_WORDS>;

struct Rows {
    rows: u32,              // output rows
    row_len: u32,           // elements per output row
    row_shift: u32,         // log2 of the threads of rows_body per row (a power of two >= max blocks / BPT)
    edge_slots: u32,        // threads of row_edges_body per row (words of a row's edges, at most 9)
    stride_j: u32,          // input element stride between the interleaved rows (q % ILV)
    stride_w: u32,          // input element stride along the row (q / ILV)
    channels: u32,          // row_at's sizes: channels, height (rows per channel of the row space)
    height: u32,
    in_stride_n: u32,       // input strides in elements
    in_stride_c: u32,
    in_stride_h: u32,
    in_stride_w: u32,
    out_stride_n: u32,      // output strides in elements (the w stride is 1)
    out_stride_c: u32,
    out_stride_h: u32,
    chan_i: u32,            // channel map: other_c = i * chan_i + j * chan_j + c * chan_c
    chan_j: u32,
    chan_c: u32,
    src_base: u32,          // element offset of the input in its binding
    dst_base: u32,          // element offset of the output in its binding
    units: u32,             // staged_body: units (group x chunk), units a workgroup, log2 of the
    upw: u32,               //   threads a unit, columns a group and a chunk, chunks a group, words
    unit_shift: u32,        //   of workgroup memory a unit and per input run (a spare word for a
    cols: u32,              //   run that starts inside a word), element step between a unit's
    tw: u32,                //   input runs and between its output segments
    chunks: u32,
    unit_cap: u32,
    run_words: u32,
    run_stride: u32,
    seg_stride: u32,
    height_m: u32,          // magic pairs (grid.wgsl's div_magic) of height and channels
    height_s: u32,
    channels_m: u32,
    channels_s: u32,
    regions: u32,           // the tiled row kernels (depth_to_space_ / space_to_depth_rows_tiled):
    regions_m: u32,         //   threads a row (regions of its interior) and their magic pair
    regions_s: u32,
    row_len_m: u32,         // packed_rows_body: magic pair of row_len; output channels (the row
    row_len_s: u32,         //   order in memory: SpaceToDepth's row_at_out) and their magic pair
    out_channels: u32,
    out_channels_m: u32,
    out_channels_s: u32,
}

@group(0) @binding(8) var<uniform> rw: Rows;

// Start of a row: input element (x) and output element (y), both relative to their bindings.
struct RowAt {
    src: u32,
    dst: u32,
}

// The interior of a row starting at output element dst: whole 16-byte blocks [first, end).
fn interior(dst: u32) -> vec2<u32> {
    let first = (dst * ELEM_BYTES + 15u) / 16u;
    let end = (dst + rw.row_len) * ELEM_BYTES / 16u;
    return vec2<u32>(first, max(first, end));
}

fn row_src(row: RowAt, q: u32) -> u32 {
    return row.src + (q % ILV) * rw.stride_j + (q / ILV) * rw.stride_w;
}

// One output word of 1- or 2-byte elements: row elements k0 .. k0 + 4/ELEM_BYTES - 1 after the
// block's first (lane j0 of the interleave, input element w0 for its column).
fn gather_word(w0: u32, j0: u32, k0: u32) -> u32 {
    let pw = 4u / ELEM_BYTES;
    let bits = ELEM_BYTES * 8u;
    var word = 0u;
    for (var e = 0u; e < pw; e++) {
        let jj = j0 + k0 + e;
        let s = w0 + (jj % ILV) * rw.stride_j + (jj / ILV) * rw.stride_w;
        word = insertBits(word, extractBits(input[s / pw], (s % pw) * bits, bits), e * bits, bits);
    }
    return word;
}

fn rows_body(tid: u32) {
    // a power of two threads a row: the split of the thread id is a shift, not a division
    let r = tid >> rw.row_shift;
    if (r >= rw.rows) { return; }
    let tpr = 1u << rw.row_shift;
    let kt = tid & (tpr - 1u);
    let row = row_at(r);
    let span = interior(row.dst);
    let epv = 16u / ELEM_BYTES;
    for (var m = 0u; m < BPT; m++) {
        let t = span.x + kt + m * tpr;
        if (t >= span.y) { return; }
        let q0 = t * epv - row.dst;   // row element at the block's first byte
        // q = q0 + k: its interleave lane and column, split once so that the per-element
        // divisions are by the compile-time ILV of small numbers.
        let j0 = q0 % ILV;
        let w0 = row.src + (q0 / ILV) * rw.stride_w;
        if (ELEM_BYTES < 4u) {
            // 1- and 2-byte elements: each output word assembled on its own (no vector lane
            // selects), each element a bit-field extract and insert
            let pw = 4u / ELEM_BYTES;
            output4[t] = vec4<u32>(gather_word(w0, j0, 0u), gather_word(w0, j0, pw), gather_word(w0, j0, 2u * pw),
                                   gather_word(w0, j0, 3u * pw));
        } else {
            var block = vec4<u32>(0u);
            for (var k = 0u; k < epv; k++) {
                let jj = j0 + k;
                let s = w0 + (jj % ILV) * rw.stride_j + (jj / ILV) * rw.stride_w;
                block = put(block, k * ELEM_BYTES, fetch(s));
            }
            output4[t] = block;
        }
    }
}

fn row_edges_body(tid: u32) {
    let r = tid / rw.edge_slots;
    if (r >= rw.rows) { return; }
    let slot = tid % rw.edge_slots;
    let row = row_at(r);
    let span = interior(row.dst);
    // bytes [a, b) of the row in its binding; the edge ranges are [a, lo_end) and [hi_start, b)
    let a = row.dst * ELEM_BYTES;
    let b = a + rw.row_len * ELEM_BYTES;
    var lo_end = b;
    var hi_start = b;
    if (span.y > span.x) {
        lo_end = span.x * 16u;
        hi_start = span.y * 16u;
    }
    // one thread per word of an edge range: the head's words, then the tail's
    let head_words = (lo_end + 3u) / 4u - a / 4u;
    var w = a / 4u + slot;
    var lo = a;
    var hi = lo_end;
    if (slot >= head_words) {
        w = hi_start / 4u + slot - head_words;
        lo = hi_start;
        hi = b;
    }
    store_row_word(row, a, max(lo, w * 4u), min(hi, w * 4u + 4u), w);
}

// Bytes [first, last) of word w, all of the row starting at byte a: merged into one value and one
// mask and stored; a word the row does not fill is merged with atomics, because its other bytes
// belong to another row (another thread) or to no element.
fn store_row_word(row: RowAt, a: u32, first: u32, last: u32, w: u32) {
    if (first >= last) { return; }
    var value = 0u;
    var mask = 0u;
    for (var byte = first; byte < last; byte += min(ELEM_BYTES, 4u)) {
        let q = (byte - a) / ELEM_BYTES;
        let v = fetch(row_src(row, q));
        var bits = v.x;
        if (ELEM_BYTES == 8u && (byte - a) % 8u == 4u) { bits = v.y; }
        let sh = (byte % 4u) * 8u;
        let m = select(lane_mask(), 0xFFFFFFFFu, ELEM_BYTES >= 4u) << sh;
        value |= (bits << sh) & m;
        mask |= m;
    }
    if (mask == 0xFFFFFFFFu) {
        atomicStore(&output_atomic[w], value);
    } else {
        atomicAnd(&output_atomic[w], ~mask);
        atomicOr(&output_atomic[w], value);
    }
}

// The word-store kernels' split of a thread id (rows_body's, which keeps its own copy: it is the
// GPU path, not re-measured): its row, its index among the row's threads, and that count.
struct RowThread {
    live: bool,
    row: RowAt,
    kt: u32,
    tpr: u32,
}

fn row_thread(tid: u32) -> RowThread {
    var t: RowThread;
    let r = tid >> rw.row_shift;
    t.live = r < rw.rows;
    if (!t.live) { return t; }
    t.tpr = 1u << rw.row_shift;
    t.kt = tid & (t.tpr - 1u);
    t.row = row_at(r);
    return t;
}

// row_words_body for 1- and 2-byte elements: BPT chunks of 4 output words a thread, from the
// word holding the row's first byte; words the row fills are stored whole (plain stores: no other
// thread touches them), its (at most two) shared end words merged with atomics. The output is
// bound twice, as `output` and as `output_atomic`.
fn row_words_shared_body(tid: u32) {
    let rt = row_thread(tid);
    if (!rt.live) { return; }
    let row = rt.row;
    let a = row.dst * ELEM_BYTES;
    let b = a + rw.row_len * ELEM_BYTES;
    for (var m = 0u; m < BPT; m++) {
        let w0 = a / 4u + (rt.kt + m * rt.tpr) * 4u;
        if (w0 * 4u >= b) { return; }
        for (var j = 0u; j < 4u; j++) {
            let w = w0 + j;
            if (w * 4u >= a && w * 4u + 4u <= b) {
                // a word the row fills: its elements at compile-time lane positions
                let q0 = (w * 4u - a) / ELEM_BYTES;
                let j0 = q0 % ILV;
                output[w] = gather_word(row.src + (q0 / ILV) * rw.stride_w, j0, 0u);
            } else {
                store_row_word(row, a, max(a, w * 4u), min(b, w * 4u + 4u), w);
            }
        }
    }
}

fn row_words_body(tid: u32) {
    let rt = row_thread(tid);
    if (!rt.live) { return; }
    let row = rt.row;
    let epc = 16u / ELEM_BYTES;   // elements a chunk
    let wpe = ELEM_BYTES / 4u;    // words an element
    for (var m = 0u; m < BPT; m++) {
        let q0 = (rt.kt + m * rt.tpr) * epc;
        if (q0 >= rw.row_len) { return; }
        let j0 = q0 % ILV;
        let w0 = row.src + (q0 / ILV) * rw.stride_w;
        for (var k = 0u; k < min(epc, rw.row_len - q0); k++) {
            let jj = j0 + k;
            let v = fetch(w0 + (jj % ILV) * rw.stride_j + (jj / ILV) * rw.stride_w);
            let o = (row.dst + q0 + k) * wpe;
            output[o] = v.x;
            if (ELEM_BYTES == 8u) { output[o + 1u] = v.y; }
        }
    }
}

// Staged rows (see the header): local thread `lid` of workgroup `wg`. The workgroup's threads
// form upw teams of 2^unit_shift (>= 32), one unit each, so that a team's loads and stores run
// along consecutive words and no index needs a division by a run-time value. Output element e of
// segment g of a unit is staged element (e / ILV) * STAGE_SW + g of input run e % ILV.
fn staged_body(lid: u32, wg: u32) {
    let slot = lid >> rw.unit_shift;
    let lane = lid & ((1u << rw.unit_shift) - 1u);
    let team = 1u << rw.unit_shift;
    let u = wg * rw.upw + slot;
    let live = u < rw.units;
    var src = 0u;
    var dst = 0u;
    var cols = 0u;
    if (live) {
        let group = u / rw.chunks;
        let ch = u - group * rw.chunks;
        let row = row_at(group * STAGE_SEGS);
        src = row.src + ch * rw.tw * STAGE_SW;
        dst = row.dst + ch * rw.tw * ILV;
        cols = min(rw.tw, rw.cols - ch * rw.tw);
    }
    let base = slot * rw.unit_cap;
    // every input word of the unit's runs, a team on consecutive words
    for (var run = 0u; run < STAGE_RUNS; run++) {
        let s = src + run * rw.run_stride;
        let first = s * ELEM_BYTES / 4u;
        let end = (s + cols * STAGE_SW) * ELEM_BYTES;   // end byte of the run
        for (var k = lane; (first + k) * 4u < end; k += team) {
            stage[base + run * rw.run_words + k] = input[first + k];
        }
    }
    workgroupBarrier();
    if (!live) { return; }
    // every output word of the unit's segments
    for (var g = 0u; g < STAGE_SEGS; g++) {
        let a = (dst + g * rw.seg_stride) * ELEM_BYTES;
        let b = a + cols * ILV * ELEM_BYTES;
        for (var w = a / 4u + lane; w * 4u < b; w += team) {
            let lo = max(a, w * 4u);
            let hi = min(b, w * 4u + 4u);
            var value = 0u;
            var mask = 0u;
            for (var p = lo; p < hi; p += min(ELEM_BYTES, 4u)) {
                let e = (p - a) / ELEM_BYTES;
                let run = e % ILV;
                let s = src + run * rw.run_stride;
                let sb = (base + run * rw.run_words) * 4u + (s * ELEM_BYTES) % 4u
                       + ((e / ILV) * STAGE_SW + g) * ELEM_BYTES + (p - a) % ELEM_BYTES;
                let word = stage[sb / 4u];
                if (ELEM_BYTES >= 4u) {
                    value = word;
                    mask = 0xFFFFFFFFu;
                } else {
                    let sh = (p % 4u) * 8u;
                    value |= extractBits(word, (sb % 4u) * 8u, ELEM_BYTES * 8u) << sh;
                    mask |= lane_mask() << sh;
                }
            }
            merge_word(w, value, mask);
        }
    }
}

// A packed output's rows in memory order (row_at_out(r), defined by the operator's file, starts at
// output element dst_base + r * row_len): one thread per 16-byte output block, across rows, each
// element gathered from its row (the row and its start stepped from the block's first element, not
// divided per element). Every block is stored whole by one thread (the tensor's first and last
// blocks keep the bytes outside it), so rows of a few bytes need no atomic merges.
fn packed_rows_body(tid: u32) {
    let b = output_block(tid, rw.dst_base * ELEM_BYTES, rw.rows * rw.row_len, ELEM_BYTES);
    if (b.n == 0u) { return; }
    var r = div_magic(b.e_lo, rw.row_len_m, rw.row_len_s);
    var q = b.e_lo - r * rw.row_len;
    var row = row_at_out(r);
    let epv = 16u / ELEM_BYTES;
    var block = vec4<u32>(0u);
    if (b.n == epv) {
        for (var k = 0u; k < epv; k++) {   // lane positions constant after unrolling
            if (q == rw.row_len) {
                r += 1u;
                q = 0u;
                row = row_at_out(r);
            }
            block = put(block, k * ELEM_BYTES, fetch(row_src(row, q)));
            q += 1u;
        }
    } else {
        block = output4[b.t];
        for (var k = 0u; k < b.n; k++) {
            if (q == rw.row_len) {
                r += 1u;
                q = 0u;
                row = row_at_out(r);
            }
            block = put(block, b.q0 + k * ELEM_BYTES, fetch(row_src(row, q)));
            q += 1u;
        }
    }
    output4[b.t] = block;
}

@compute @workgroup_size(WG)
fn packed_rows_entry(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    packed_rows_body(thread_id(gid, nwg));
}

// The entry points of the row kernels (the including operator's file defines row_at). The plan
// names each step <op>_<kernel>; the entry point is <kernel>_entry in every operator's module.
@compute @workgroup_size(WG)
fn rows_entry(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    rows_body(thread_id(gid, nwg));
}

@compute @workgroup_size(WG)
fn row_words_entry(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    row_words_body(thread_id(gid, nwg));
}

@compute @workgroup_size(WG)
fn row_words_shared_entry(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    row_words_shared_body(thread_id(gid, nwg));
}

@compute @workgroup_size(WG)
fn staged_entry(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
    staged_body(lid, workgroup_index(wid, nwg));
}

@compute @workgroup_size(WG)
fn row_edges_entry(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    row_edges_body(thread_id(gid, nwg));
}
