package vector

// SearchFirstPass runs Search through the int8 first pass (whatever the
// store's size) and reports, beside the hits, how many of them the first
// pass's candidate pool already held and how many rows beyond the pool
// were re-scored exactly.
func SearchFirstPass(f *Flat, q []float32, n int) (hits []Hit, inPool, rescored int, err error) {
	f.quantMin = 0
	hits, st, err := f.search(q, n)
	if err != nil || !st.quant {
		return hits, 0, 0, err
	}
	return hits, poolRecall(hits, st.pool), st.rescored, nil
}
