"""The records of play: their format (one writer, one reader, the typed records) and the durable results
folder that holds them, for every layer that writes or reads them."""
