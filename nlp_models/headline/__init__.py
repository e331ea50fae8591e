"""Headline generators (Transformer(XL)-CC and Seq2BF): models, vocabulary, decoding with
the whole-word rule, predictor, services."""
