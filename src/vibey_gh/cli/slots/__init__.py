"""`vibey-gh slots …`: one module per command of the group (`corpus`, `calibrate`, `soak`,
`allowed`, `show`, `apply`, `compare`, `forget`), imported on first use."""
