// Package learn fits and runs the small linear models Hindsight learns
// from labelled data: logistic regressions over named features, either
// binary (one weight per feature, a sigmoid giving the probability of the
// positive label) or multinomial (one weight per feature and label, a
// softmax). The sentence classifiers (lang/classify) and the prompt
// injection detector (lang/inject) are built on it; so is any model that
// judges from a handful of scores.
//
// A model is used in four steps:
//
//   - Train fits a Model to Examples, each a list of Features (a name and a
//     value; Indicators makes the value-1 features of sparse text models)
//     and the index of its label, with AdaGrad on the class-weighted log
//     loss. Options tune it; the zero value means the defaults. Training
//     is deterministic: the same examples and options give the same model,
//     to the bit.
//   - Model.Predict gives the probability of each label, Model.Score the
//     probability of the positive label, Model.Explain the features that
//     weigh most in a decision.
//   - Model.Encode writes the model as gzipped text that depends only on
//     the model (so a retrain on the same data gives the same bytes), and
//     Decode reads it back. A model records the version of the features
//     it was trained on and a DataHash of its training data, so that a
//     test can tell when either changed without a retrain.
//   - Fold and Split hold examples out; CrossValidate trains on all folds
//     but one and scores the one left out, for each; Confusion counts
//     what was right (accuracy, precision and recall per label or for the
//     positive labels together) and PRCurve traces precision against
//     recall over a score's thresholds.
//
// The caller owns what the features are: learn only sees their names.
package learn
