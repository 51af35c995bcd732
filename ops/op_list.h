// The only list of built-in ops (X-macro). Adding an op: a folder under ops/ and one line
// here; ops/CMakeLists.txt reads this list for the sources and the umbrella header.
MG_OP(add)
MG_OP(sum_to)
MG_OP(broadcast_to)
MG_OP(matmul)
MG_OP(embedding)
MG_OP(embedding_backward)
MG_OP(position_embedding)
MG_OP(position_embedding_backward)
MG_OP(token_position_embedding)
