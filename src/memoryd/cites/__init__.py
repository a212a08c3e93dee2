"""Citations: a memory names the code it describes, and is checked against it when used."""
