package artifact

import "strconv"

// RenderVersion identifies the text format Render produces (see the package documentation).
const RenderVersion = 1

// Render returns the request text of an opened pack: a pure function of it, so the same pack
// renders to the same bytes. Each artifact is one section holding its normalized body (the
// bytes its digest covers), between an opening line that names its id, path and digests and a
// closing line that repeats its digest; the whole is framed by lines naming the pack digest.
func Render(op *OpenedPack) []byte {
	n := 256
	for _, a := range op.Artifacts {
		n += 320 + len(a.Reference.ID) + len(a.Reference.Path) + len(a.Artifact.Body)
	}
	b := make([]byte, 0, n)
	b = append(b, `<artifact-pack digest=`...)
	b = appendString(b, string(op.Digest))
	if op.Pack.Name != "" {
		b = append(b, ` name=`...)
		b = appendString(b, op.Pack.Name)
	}
	if op.Pack.Version != "" {
		b = append(b, ` version=`...)
		b = appendString(b, op.Pack.Version)
	}
	b = append(b, ` count="`...)
	b = strconv.AppendInt(b, int64(len(op.Artifacts)), 10)
	b = append(b, "\">\n"...)
	for _, a := range op.Artifacts {
		r := a.Reference
		b = append(b, `<artifact id=`...)
		b = appendString(b, r.ID)
		b = append(b, ` path=`...)
		b = appendString(b, r.Path)
		b = append(b, ` digest=`...)
		b = appendString(b, string(r.Digest))
		b = append(b, ` fileDigest=`...)
		b = appendString(b, string(r.FileDigest))
		b = append(b, ` bytes="`...)
		b = strconv.AppendInt(b, int64(len(a.Artifact.Body)), 10)
		b = append(b, "\">\n"...)
		b = append(b, a.Artifact.Body...)
		b = append(b, `</artifact digest=`...)
		b = appendString(b, string(r.Digest))
		b = append(b, ">\n"...)
	}
	b = append(b, `</artifact-pack digest=`...)
	b = appendString(b, string(op.Digest))
	b = append(b, ">\n"...)
	return b
}
