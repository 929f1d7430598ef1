"""The thin click CLI: parse, call one library function, render."""
