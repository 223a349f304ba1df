// Package strictyaml decodes untrusted YAML configuration strictly, every problem named by
// file and line:
//
//   - anchors, aliases and merge keys are refused outright (a configuration never needs
//     them, and refusing them refuses every alias bomb before anything is expanded);
//   - a mapping key given twice is refused at its second occurrence (both lines named);
//   - more than one document, and an empty file, are refused;
//   - keys that no field of the target type names are refused ([Decode] decodes with
//     known fields only), as are values of the wrong type.
//
// [Decode] returns the parsed document too, so that a caller's own validation can name the
// line of any field ([Line]). Errors are a *[Error] listing every [Problem].
package strictyaml
