// The umbrella header, above every floor (framework, ops, models, train): tensors, autograd,
// modules, gradcheck, graph pictures, op libraries, threads and CPU memory statistics, every
// built-in op, the ANDREA layers and the training data (tokenizer, dataset, batches).
#pragma once

#include "minigraph/autograd.h"
#include "minigraph/backend.h"
#include "minigraph/cpu.h"
#include "minigraph/error.h"
#include "minigraph/format.h"
#include "minigraph/gradcheck.h"
#include "minigraph/graphviz.h"
#include "minigraph/models/andrea/model.h"
#include "minigraph/module.h"
#include "minigraph/op.h"
#include "minigraph/ops.h"
#include "minigraph/plugin.h"
#include "minigraph/tensor.h"
#include "minigraph/threads.h"
#include "minigraph/train/data/dataset.h"
#include "minigraph/train/data/tokenizer.h"
#include "minigraph/version.h"
