"""The llama.cpp kinds: embedded (xllamacpp inside this package) and llama-server (llama.cpp's
own binary). Both serve llama.cpp's HTTP API (`api/`), read GGUF files and write llama.cpp's
log lines; a calibration runner of theirs counts a prompt's tokens (`prompt_counter`)."""
