"""The serving package: everything the four served models need at inference time
(architectures, vocabularies, decoding, predictors, the Triton Python-backend models) and
nothing else. Depends on torch, numpy and sentencepiece only (requirements.txt); never on
`training` or `services`, which both import from here.

Every version directory of model_repository/ carries a copy of this package as
nlp_models.zip (training/repository.py bundles it at publish time), so a served version
keeps the code it was published with.
"""
