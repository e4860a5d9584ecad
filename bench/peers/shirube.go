package main

// ─── HOOK: shirube's own engine ──────────────────────────────────────────
//
// shirubeEngines lists shirube's engines so that one run reports them next
// to the peers, with ratio rows. To add one, write a Build function (see
// buildBleve and buildChromem for the shape: index Input, return a Searcher
// that answers Input.Queries[i] with Input.K hits) and list it here, e.g.
//
//	return []Engine{
//		{Name: "shirube-bm25", Kind: "lexical", Baseline: "bleve-bm25", Build: buildShirubeBM25},
//		{Name: "shirube-vector", Kind: "vector", Baseline: "chromem-go", Build: buildShirubeVector},
//	}
//
// A vector engine should index Input.DocVecs and search with Input.QueryVecs
// (the same vectors chromem-go gets) so that the ratio measures search speed
// alone. The harness times Build, measures retained heap, warms up, times
// each query sequentially and computes nDCG@10 / MRR@10 / Recall@10/100.
func shirubeEngines() []Engine {
	return nil
}
