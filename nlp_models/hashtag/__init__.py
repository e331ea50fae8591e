"""SegTrm hashtag generator: model, vocabularies, beam search, predictor, blocklist, service."""
