"""The llama.cpp kinds: embedded (xllamacpp inside this package) and llama-server (llama.cpp's
own binary). Both serve llama.cpp's HTTP API, read GGUF files and write llama.cpp's log lines."""
