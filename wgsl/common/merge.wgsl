// One output word written by a thread that owns only some of its bits, shared by the kernels whose
// rows start or end inside a 32-bit word (the resample row walks' ENDS and PAT_RAGGED_BYTES, the
// antialias kernels' GW / OA forms and aa_element_words, the tile transpose's ragged entry point,
// the staged row kernel).
//
// The including shader binds the output twice: `output` (array<u32>) and `output_atomic`
// (array<atomic<u32>>, the same buffer). A word whose every bit the thread owns is stored plainly:
// no other thread writes it. A word it shares (with a neighbouring row or thread, a gap or bytes
// outside the tensor) is merged with atomicAnd / atomicOr and only ever written that way, by every
// thread that owns part of it, so plain and atomic writes never meet on one word.

// Bits m of output word w set to v's, the word's other bits kept; a plain store where m is the whole
// word, nothing where m is 0 (w need not lie in the binding then).
fn merge_word(w: u32, v: u32, m: u32) {
    if (m == 0xFFFFFFFFu) {
        output[w] = v;
    } else if (m != 0u) {
        atomicAnd(&output_atomic[w], ~m);
        atomicOr(&output_atomic[w], v & m);
    }
}
