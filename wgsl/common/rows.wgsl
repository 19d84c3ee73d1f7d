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
//                   to thread k % threads_per_row, so the threads of a warp store consecutive
//                   blocks with every store instruction (coalesced), and BPT > 1 spreads the row
//                   index arithmetic over several blocks. Rows need not be 16-byte aligned.
//   row_edges_body  the elements of each row outside its interior (the head before the first whole
//                   block and the tail after the last; the whole row when it has none), one thread
//                   per element slot, merged into their words with atomics: the neighbouring bytes
//                   of those words belong to other rows (written by other threads) or to no element.
// The plan runs row_edges only when some row does not start and end on a 16-byte boundary.
// Bindings: common/permute.wgsl's input (u32 words), output4 (vec4 words), output_atomic, and
// 8 uniforms (Rows).

#include "common/permute.wgsl"

override ILV: u32 = 1u;   // input rows interleaved into one output row
override BPT: u32 = 1u;   // interior blocks per thread

struct Rows {
    rows: u32,              // output rows
    row_len: u32,           // elements per output row
    threads_per_row: u32,   // threads of rows_body per row: ceil(max interior blocks / BPT)
    edge_slots: u32,        // threads of row_edges_body per row
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

fn rows_body(tid: u32) {
    let r = tid / rw.threads_per_row;
    if (r >= rw.rows) { return; }
    let kt = tid % rw.threads_per_row;
    let row = row_at(r);
    let span = interior(row.dst);
    let epv = 16u / ELEM_BYTES;
    for (var m = 0u; m < BPT; m++) {
        let t = span.x + kt + m * rw.threads_per_row;
        if (t >= span.y) { return; }
        let q0 = t * epv - row.dst;   // row element at the block's first byte
        // q = q0 + k: its interleave lane and column, split once so that the per-element
        // divisions are by the compile-time ILV of small numbers.
        let j0 = q0 % ILV;
        let w0 = row.src + (q0 / ILV) * rw.stride_w;
        var block = vec4<u32>(0u);
        for (var k = 0u; k < epv; k++) {
            let jj = j0 + k;
            let s = w0 + (jj % ILV) * rw.stride_j + (jj / ILV) * rw.stride_w;
            block = put(block, k * ELEM_BYTES, fetch(s));
        }
        output4[t] = block;
    }
}

fn row_edges_body(tid: u32) {
    let r = tid / rw.edge_slots;
    if (r >= rw.rows) { return; }
    let slot = tid % rw.edge_slots;
    let row = row_at(r);
    let span = interior(row.dst);
    let epv = 16u / ELEM_BYTES;
    var q = slot;
    if (span.y > span.x) {
        let head = span.x * epv - row.dst;        // elements before the first whole block
        let tail = span.y * epv - row.dst;        // first element after the last whole block
        if (slot >= head) { q = tail + slot - head; }
    }
    if (q >= rw.row_len) { return; }
    let v = fetch(row_src(row, q));
    let d = row.dst + q;
    if (ELEM_BYTES >= 4u) {
        let words = ELEM_BYTES / 4u;
        atomicStore(&output_atomic[d * words], v.x);
        if (words == 2u) { atomicStore(&output_atomic[d * words + 1u], v.y); }
        return;
    }
    let per_word = 4u / ELEM_BYTES;
    let sh = (d % per_word) * ELEM_BYTES * 8u;
    let mask = lane_mask() << sh;
    atomicAnd(&output_atomic[d / per_word], ~mask);
    atomicOr(&output_atomic[d / per_word], v.x << sh);
}
