"""DCNN Twitter POS tagger: model, token features, ARK word clusters, tokenizer, predictor."""
