// The only list of built-in ops (X-macro). Adding an op: a folder under ops/ and one line
// here, or a row in its family's table; ops/CMakeLists.txt reads this list for the sources and
// the umbrella header. MG_FAMILY: a folder of ops that share one engine, each op a row of its
// table (binary: add, sub, mul, div and the activations' *_backward; unary: neg, scale, exp,
// log, the activations, powers and tensor-scalar arithmetic; reduction: sum, mean; update:
// moving_average, adamw_update, momentum_update, sgd_update; softmax: softmax, log_softmax and
// their backward rows; triangle: tril, triu; max: max, min, argmax, argmin, max_backward;
// the comparisons eq ... ge are binary rows; attention: scaled_dot_product_attention, its
// masked form and their backward ops, one pair of kernels; cat is variadic, stack built on it). MG_VIEW: a folder
// that registers nothing: a view defined on the ops floor (expand, whose backward sums;
// position_embedding, a narrow behind the position rule's checks; views are not in the
// registry), or a factory (arange). Its folder joins like an op's.
MG_FAMILY(binary)
MG_FAMILY(unary)
MG_FAMILY(reduction)
MG_OP(sum_to)
MG_OP(broadcast_to)
MG_VIEW(expand)
MG_OP(matmul)
MG_OP(embedding)
MG_OP(embedding_backward)
MG_VIEW(position_embedding)
MG_OP(position_embedding_backward)
MG_OP(token_position_embedding)
MG_FAMILY(update)
MG_FAMILY(softmax)
MG_OP(layer_norm)
MG_OP(attention)
MG_OP(where)
MG_FAMILY(triangle)
MG_FAMILY(max)
MG_OP(dropout)
MG_VIEW(arange)
MG_OP(cat)
MG_OP(squared_norm)
MG_OP(cross_entropy)
MG_OP(cross_entropy_backward)
MG_OP(linear_cross_entropy)
