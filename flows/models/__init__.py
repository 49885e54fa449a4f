"""The models behind the Protocols of ``transforms``: the llama-cpp summarizer (``llm``) and the embedders (``embed``)."""
