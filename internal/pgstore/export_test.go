package pgstore

// DenseSQL exposes the vector leg's query on ix's generation to the tests.
func DenseSQL(ix *Index, hnsw bool) string {
	return denseSQL(partition("embeddings", ix.gen), hnsw)
}
