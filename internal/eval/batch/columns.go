package batch

// Column names of the input and results CSVs (seed 000). Input columns are
// found with csvx.MatchColumn, so "question" or "Reference_Document" work
// too; output always uses these spellings.
const (
	ColQuestion    = "Question"
	ColGroundTruth = "Ground Truth"
	ColReference   = "Reference Document"
	ColPage        = "Page"
	ColChecklist   = "Checklist"
	ColOptimized   = "Optimized Reference Document"

	ColAnswer    = "RAG Answer"
	ColRetrieved = "Retrieved Files"
	ColReason    = "Evaluation Reason"

	ColChecklistRecall      = "Checklist Recall"
	ColChecklistPrecision   = "Checklist Precision"
	ColChecklistTP          = "Checklist TP"
	ColChecklistFP          = "Checklist FP"
	ColChecklistFN          = "Checklist FN"
	ColChecklistF1          = "Checklist F1"
	ColChecklistAccuracy    = "Checklist Accuracy"
	ColChecklistTN          = "Checklist TN"
	ColChecklistSpecificity = "Checklist Specificity"

	ColRefRecall      = "Ref Recall"
	ColRefPrecision   = "Ref Precision"
	ColRefSpecificity = "Ref Specificity"
	ColRefTP          = "Ref TP"
	ColRefTN          = "Ref TN"
	ColRefFP          = "Ref FP"
	ColRefFN          = "Ref FN"
	ColRefF1          = "Ref F1"
	ColRefAccuracy    = "Ref Accuracy"

	// ColGenerator names what wrote the row's answer ("extractive",
	// "llm:<model>", "guard"); ColJudge the checklist judge that scored it.
	ColGenerator = "Generator"
	ColJudge     = "Checklist Judge"
)

// optPrefix turns a Ref column into its Optimized Reference counterpart
// ("Ref Recall" → "Opt Ref Recall").
const optPrefix = "Opt "

// inputColumns are the columns of an evaluation input, in output order.
func inputColumns() []string {
	return []string{ColQuestion, ColGroundTruth, ColReference, ColPage, ColChecklist}
}

// evalColumns are the columns seed 000 lists, in its order, followed by the
// extra metrics shirube adds.
func evalColumns() []string {
	return []string{
		ColAnswer, ColRetrieved,
		ColChecklistRecall, ColChecklistPrecision, ColChecklistTP, ColChecklistFP, ColChecklistFN,
		ColRefRecall, ColRefPrecision, ColRefSpecificity, ColRefTP, ColRefTN, ColRefFP, ColRefFN,
		ColReason,
		ColChecklistF1, ColChecklistAccuracy, ColChecklistTN, ColChecklistSpecificity,
		ColRefF1, ColRefAccuracy,
		ColGenerator, ColJudge,
	}
}

// optColumns are written when the input has an Optimized Reference Document
// column.
func optColumns() []string {
	cols := []string{ColOptimized}
	for _, c := range []string{ColRefRecall, ColRefPrecision, ColRefSpecificity, ColRefF1, ColRefAccuracy, ColRefTP, ColRefTN, ColRefFP, ColRefFN} {
		cols = append(cols, optPrefix+c)
	}
	return cols
}

// answerColumns are the columns of a Question-only run.
func answerColumns() []string {
	return []string{ColQuestion, ColAnswer, ColRetrieved, ColReason}
}

// metricColumns are the numeric columns averaged into the summary, in
// output order.
func metricColumns(withOpt bool) []string {
	var out []string
	cols := evalColumns()
	if withOpt {
		cols = append(cols, optColumns()...)
	}
	for _, c := range cols {
		switch c {
		case ColAnswer, ColRetrieved, ColReason, ColOptimized:
			continue
		}
		out = append(out, c)
	}
	return out
}
