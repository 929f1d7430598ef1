"""llama.cpp's HTTP API: the OpenAI-compatible chat format (`openai_api`), the typed replies of
`/props`, `/slots` and the rest (`wire`), production watched through /health and /slots
(`watch`)."""
