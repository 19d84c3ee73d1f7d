// DepthToSpace / DepthToSpace1 (DML_OPERATOR_DEPTH_TO_SPACE, _DEPTH_TO_SPACE1), every data type.
//
// Index math (spec 2.3), b = BlockSize, C' = C / (b*b), for output (n, c, h*b + i, w*b + j):
//   DEPTH_COLUMN_ROW ("DCR"): output[n, c, h*b+i, w*b+j] = input[n, (i*b + j)*C' + c, h, w]
//   COLUMN_ROW_DEPTH ("CRD"): output[n, c, h*b+i, w*b+j] = input[n, c*b*b + i*b + j, h, w]
// The host (src/dmlwgsl/ops/depth_to_space.py) folds this formula into a 6-D iteration space
// (n, c, h, i, w, j) whose input and output strides are linear in the index, merges the dimensions
// that stay contiguous, and passes them as uniforms. The shader is then a pure strided gather:
// no per-element division, one pipeline per (element size, output layout).
// Fast path (depth_to_space_tiled), for rows that are contiguous and 16-byte aligned on both
// sides and BLOCK 2, 3, 4 or 8: one thread loads one 16-byte vector from each of the b input channels
// (i*b + j)*C' + c (DCR) or c*b*b + i*b + j (CRD), j = 0..b-1, at row h, and stores their b-way
// interleave as b vectors of output row h*b + i. With BLOCK 2 (depth_to_space_zip) a thread
// builds one output vector from an 8-byte load of each of the two channels instead; with
// depth_to_space_tiled_staged the b output vectors go through workgroup memory and the workgroup
// stores them in order (the GPU's path at blocks 4 and 8).
// General fast path (depth_to_space_rows, + depth_to_space_row_edges for unaligned rows), for any
// block size, element size, row length and alignment and any input strides, with an output whose
// w stride is 1: output row (n, c, h*b + i) interleaves the b input rows of channels
// in_c(i, j, c), j = 0..b-1 (common/rows.wgsl; row_at below is the formula above for one row).
// depth_to_space_rows_tiled (below): those rows at blocks 2, 3, 4 and 8 with contiguous input rows,
// block whole 16-byte blocks a thread from 16-byte input runs loaded at any alignment and
// interleaved as the tiled kernel does (the GPU's path for 1- and 2-byte elements).
// Bindings and uniform layouts: see common/permute.wgsl, common/tiles.wgsl and common/rows.wgsl.

#include "common/tiles.wgsl"
#include "common/staged_store.wgsl"
#include "common/rows.wgsl"
#include "common/transpose.wgsl"

// Output row r, rows ordered (n, c, h, i): its first input element (j = 0, w = 0) and output element.
fn row_at(r: u32) -> RowAt {
    let i = r % BLOCK;
    let t = r / BLOCK;
    let q = div_magic(t, rw.height_m, rw.height_s);
    let h = t - q * rw.height;
    let n = div_magic(q, rw.channels_m, rw.channels_s);
    let c = q - n * rw.channels;
    let in_c = i * rw.chan_i + c * rw.chan_c;
    return RowAt(rw.src_base + n * rw.in_stride_n + in_c * rw.in_stride_c + h * rw.in_stride_h,
                 rw.dst_base + n * rw.out_stride_n + c * rw.out_stride_c + (h * BLOCK + i) * rw.out_stride_h);
}

// Output row r in memory order (packed_rows_body): rows (n, c, h, i) are the output's (n, c, h*b + i).
fn row_at_out(r: u32) -> RowAt { return row_at(r); }

fn tile_vec(t: TileAt, j: u32) -> vec4<u32> {
    let in_c = t.i * tl.chan_i + j * tl.chan_j + t.c * tl.chan_c;
    return load_in(tl.src_base + t.n * tl.in_stride_n + in_c * tl.in_stride_c + t.h * tl.in_stride_h + t.w0);
}

// The BLOCK input vectors of a tile: one per input row j (channel in_c(i, j, c)) at row h.
fn tile_rows(t: TileAt) -> Oct {
    var o = Oct(Quad(tile_vec(t, 0u), tile_vec(t, 1u), vec4<u32>(0u), vec4<u32>(0u)),
                Quad(vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u)));
    if (BLOCK >= 3u) { o.lo.c = tile_vec(t, 2u); }
    if (BLOCK >= 4u) { o.lo.d = tile_vec(t, 3u); }
    if (BLOCK == 8u) { o.hi = Quad(tile_vec(t, 4u), tile_vec(t, 5u), tile_vec(t, 6u), tile_vec(t, 7u)); }
    return o;
}

// The first output element of a tile (its BLOCK vectors are consecutive in output row h*b + i).
fn out_first(t: TileAt) -> u32 {
    return tl.dst_base + t.n * tl.out_stride_n + t.c * tl.out_stride_c + (t.h * BLOCK + t.i) * tl.out_stride_h
           + t.w0 * BLOCK;
}

@compute @workgroup_size(WG)
fn depth_to_space_tiled(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let tid = thread_id(gid, nwg);
    if (tid >= tl.threads) { return; }
    // row space: output rows (n, c, h, i) of C' channels; tl.chan maps (i, j, c) to the input channel
    let t = tile_at(tid, tile_v());
    let out = interleave_tile(tile_rows(t));
    let o = out_first(t);
    for (var k = 0u; k < BLOCK; k++) {
        if (TILE_HALF) {
            output2[(o + k * tile_v()) / tile_v()] = tile_half(out, k);
        } else {
            store_out(o + k * (16u / ELEM_BYTES), oct_get(out, k));
        }
    }
}

// BLOCK == 2: one thread per 16-byte output vector, built from two 8-byte loads (one per input
// channel), so that both the loads and the stores of a warp are contiguous.
@compute @workgroup_size(WG)
fn depth_to_space_zip(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let tid = thread_id(gid, nwg);
    if (tid >= tl.threads) { return; }
    let h = 8u / ELEM_BYTES;   // elements per 8-byte half vector
    let t = tile_at(tid, h);
    let c0 = t.i * tl.chan_i + t.c * tl.chan_c;
    let e = tl.src_base + t.n * tl.in_stride_n + c0 * tl.in_stride_c + t.h * tl.in_stride_h + t.w0;
    let a = input2[e / h];
    let b = input2[(e + tl.chan_j * tl.in_stride_c) / h];
    let o = tl.dst_base + t.n * tl.out_stride_n + t.c * tl.out_stride_c + (t.h * 2u + t.i) * tl.out_stride_h
          + t.w0 * 2u;
    store_out(o, zip2(a, b));
}

// The tiled kernel with staged stores (tiles.wgsl): the loads and the interleave of
// depth_to_space_tiled, the BLOCK output vectors of each thread stored by the workgroup in order.
@compute @workgroup_size(WG)
fn depth_to_space_tiled_staged(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                               @builtin(local_invocation_index) li: u32) {
    let tid = thread_id(gid, nwg);
    if (tid < tl.threads) {
        let t = tile_at(tid, 16u / ELEM_BYTES);
        stage_tile(li * BLOCK, 1u, interleave_tile(tile_rows(t)));
        tr_base[li] = out_first(t);
    }
    workgroupBarrier();
    store_staged(li, tid - li);
}

// Staged vector p: thread p / BLOCK's vector p % BLOCK, consecutive in the output after its first.
fn staged_owner(p: u32) -> u32 { return p / BLOCK; }
fn staged_dst(p: u32) -> u32 { return tr_base[p / BLOCK] + (p % BLOCK) * (16u / ELEM_BYTES); }

// ---- depth_to_space_rows_tiled: the row kernel's rows (any length and alignment, contiguous input
// rows) with the tiled kernel's loads and interleave. A thread takes a region of BLOCK whole
// 16-byte blocks of one output row's interior (the last region of a row fewer; the edges are
// row_edges_body's): 16 * BLOCK bytes, BLOCK * V elements q0 .. (V = 16 / ELEM_BYTES). With
// q0 = c0 * BLOCK + j0, output element k = m + BLOCK * t of the region is input row
// (j0 + m) % BLOCK at column c0 + t (+ 1 where j0 + m >= BLOCK), so vector m of the tile is V
// elements of one input row from any element (load_any16), and the output is interleave_tile of
// them with every index a compile-time constant, as in depth_to_space_tiled.

// The region's vectors go through workgroup memory and the workgroup stores them in order (as in
// depth_to_space_tiled_staged). ROW_EDGES: threads past the regions run row_edges_body in the
// same dispatch (rows off 16-byte boundaries), instead of a second pass.
override ROW_EDGES: bool = false;
var<workgroup> tr_count: array<u32, 256>;

struct Region {
    t0: u32,      // first block of the region in the output binding
    count: u32,   // blocks of the region inside its row's interior (0: none)
    out: Oct,
}

// Vector m of a region's tile: V elements of input row (j0 + m) % BLOCK from column c0 (+ 1).
fn region_vec(c0: u32, j0: u32, m: u32) -> vec4<u32> {
    let jm = j0 + m;
    let wrap = jm >= BLOCK;
    return load_any16(c0 + select(jm, jm - BLOCK, wrap) * rw.stride_j + select(0u, 1u, wrap));
}

fn region_at(tid: u32) -> Region {
    var g: Region;
    let r = div_magic(tid, rw.regions_m, rw.regions_s);
    if (r >= rw.rows) { return g; }
    let row = row_at(r);
    let span = interior(row.dst);
    g.t0 = span.x + (tid - r * rw.regions) * BLOCK;
    if (g.t0 >= span.y) { return g; }
    g.count = min(BLOCK, span.y - g.t0);
    let q0 = g.t0 * (16u / ELEM_BYTES) - row.dst;
    let j0 = q0 % BLOCK;
    let c0 = row.src + q0 / BLOCK;
    var s = Oct(Quad(region_vec(c0, j0, 0u), region_vec(c0, j0, 1u), vec4<u32>(0u), vec4<u32>(0u)),
                Quad(vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u)));
    if (BLOCK >= 3u) { s.lo.c = region_vec(c0, j0, 2u); }
    if (BLOCK >= 4u) { s.lo.d = region_vec(c0, j0, 3u); }
    if (BLOCK == 8u) {
        s.hi = Quad(region_vec(c0, j0, 4u), region_vec(c0, j0, 5u), region_vec(c0, j0, 6u), region_vec(c0, j0, 7u));
    }
    g.out = interleave_tile(s);
    return g;
}

@compute @workgroup_size(WG)
fn depth_to_space_rows_tiled(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                             @builtin(local_invocation_index) li: u32) {
    let tid = thread_id(gid, nwg);
    let g = region_at(tid);   // (count 0 past the regions)
    stage_tile(li * BLOCK, 1u, g.out);
    tr_base[li] = g.t0;
    tr_count[li] = g.count;
    workgroupBarrier();
    for (var m = 0u; m < BLOCK; m++) {
        let p = li + m * WG;
        let k = p / BLOCK;
        if (p % BLOCK < tr_count[k]) {
            output4[tr_base[k] + p % BLOCK] = tr_stage[tr_slot(p)];
        }
    }
    let regions = rw.rows * rw.regions;
    if (ROW_EDGES && tid >= regions) {
        row_edges_body(tid - regions);
    }
}

@compute @workgroup_size(WG)
fn depth_to_space_packed(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    permute_packed(gid, nwg);
}

@compute @workgroup_size(WG)
fn depth_to_space_strided(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    permute_strided(gid, nwg);
}

@compute @workgroup_size(WG)
fn depth_to_space_atomic(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    permute_atomic(gid, nwg);
}
