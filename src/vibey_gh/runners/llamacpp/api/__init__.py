"""llama.cpp's own HTTP API: the typed replies of `/props`, `/slots` and the rest (`wire`),
production watched through /health and /slots (`watch`). Its chat is OpenAI's, spoken by
`runners/http/openai_chat.py` for every kind that speaks it."""
