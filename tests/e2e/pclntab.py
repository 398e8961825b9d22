"""An independent reader of a Go binary's function table (.gopclntab), for
the end-to-end tests to check gotrace-record's own reading against.

It shares nothing with record/: it reads the ELF section headers, finds
.gopclntab by name, and walks the functab of the pcHeader formats of
src/runtime/symtab.go:

- 0xfffffffa (Go 1.16-1.17): functab of (entry uintptr, funcoff uintptr);
  _func starts with entry uintptr, nameoff int32;
- 0xfffffff0 (Go 1.18-1.19), 0xfffffff1 (Go 1.20+): functab of
  (entryoff uint32, funcoff uint32) from textStart; _func starts with
  entryOff uint32, nameOff int32.

Go 1.26 stores textStart as 0 (it needed a relocation); the text address
is then moduledata.text, word 22 of moduledata, which Go 1.26 places in its
own .go.module section (word 0 is the pcHeader's address).

Only little-endian ELF64 is handled: that is what the tests read."""
import struct

MAGIC_GO116 = 0xfffffffa
MAGIC_GO118 = 0xfffffff0
MAGIC_GO120 = 0xfffffff1

# moduledata words (src/runtime/symtab.go): pcHeader, then six slices of 3
# words (funcnametab cutab filetab pctab pclntable ftab), findfunctab,
# minpc, maxpc, text.
MODULEDATA_PCHEADER = 0
MODULEDATA_TEXT = 22


class PclntabError(Exception):
    pass


def sections(data):
    """ELF64 little-endian section headers: {name: (addr, offset, size)}."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise PclntabError("not a little-endian ELF64 file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    hdrs = []
    for i in range(shnum):
        name, _typ, _flags, addr, off, size = struct.unpack_from(
            "<IIQQQQ", data, shoff + i * shentsize)
        hdrs.append((name, addr, off, size))
    stroff = hdrs[shstrndx][2]
    out = {}
    for name, addr, off, size in hdrs:
        end = data.index(b"\0", stroff + name)
        out[data[stroff + name:end].decode()] = (addr, off, size)
    return out


def _cstr(data, off):
    return data[off:data.index(b"\0", off)].decode("utf-8", "replace")


class Pclntab:
    """The function table of one Go binary: .magic, .ptrsize, .nfunc,
    .text (the address functab offsets count from, or None for Go 1.16-1.17,
    whose functab holds absolute entries), .text_from ("pcHeader",
    ".go.module" or None) and .funcs, a list of (name, entry) in functab
    order, .end the address after the last function (functab's last
    entry), .sections the ELF sections."""

    def __init__(self, path):
        with open(path, "rb") as f:
            data = f.read()
        secs = self.sections = sections(data)
        if ".gopclntab" not in secs:
            raise PclntabError("%s: no .gopclntab section" % path)
        addr, off, size = secs[".gopclntab"]
        tab = data[off:off + size]
        self.addr = addr
        self.magic, pad1, pad2, self.quantum, self.ptrsize = struct.unpack_from(
            "<IBBBB", tab, 0)
        if (pad1, pad2) != (0, 0) or self.ptrsize != 8:
            raise PclntabError("%s: unexpected pcHeader %r" % (
                path, tab[:8].hex()))
        word = lambda i: struct.unpack_from("<Q", tab, 8 + 8 * i)[0]
        self.text, self.text_from = None, None
        if self.magic == MAGIC_GO116:
            self.nfunc = word(0)
            funcname_off, pcln_off = word(2), word(6)
            functab = pcln_off
            self.funcs = []
            for i in range(self.nfunc):
                entry, funcoff = struct.unpack_from("<QQ", tab, functab + 16 * i)
                fentry, nameoff = struct.unpack_from("<Qi", tab, pcln_off + funcoff)
                if fentry != entry:
                    raise PclntabError("%s: functab[%d] entry %#x, _func %#x" % (
                        path, i, entry, fentry))
                self.funcs.append((_cstr(tab, funcname_off + nameoff), entry))
            self.end, = struct.unpack_from("<Q", tab, functab + 16 * self.nfunc)
        elif self.magic in (MAGIC_GO118, MAGIC_GO120):
            self.nfunc = word(0)
            text_start = word(2)
            funcname_off, pcln_off = word(3), word(7)
            if text_start:
                self.text, self.text_from = text_start, "pcHeader"
            else:
                self.text, self.text_from = self._module_text(path, data, secs), ".go.module"
            functab = pcln_off
            self.funcs = []
            for i in range(self.nfunc):
                entryoff, funcoff = struct.unpack_from("<II", tab, functab + 8 * i)
                fentryoff, nameoff = struct.unpack_from("<Ii", tab, pcln_off + funcoff)
                if fentryoff != entryoff:
                    raise PclntabError("%s: functab[%d] entryoff %#x, _func %#x" % (
                        path, i, entryoff, fentryoff))
                self.funcs.append((_cstr(tab, funcname_off + nameoff),
                                   self.text + entryoff))
            self.end = self.text + struct.unpack_from("<I", tab, functab + 8 * self.nfunc)[0]
        else:
            raise PclntabError("%s: unknown pclntab magic %#x" % (path, self.magic))

    def _module_text(self, path, data, secs):
        if ".go.module" not in secs:
            raise PclntabError("%s: textStart is 0 and there is no .go.module" % path)
        _addr, off, size = secs[".go.module"]
        if size < 8 * (MODULEDATA_TEXT + 1):
            raise PclntabError("%s: .go.module of %d bytes" % (path, size))
        w = lambda i: struct.unpack_from("<Q", data, off + 8 * i)[0]
        if w(MODULEDATA_PCHEADER) != self.addr:
            raise PclntabError("%s: moduledata.pcHeader %#x is not .gopclntab %#x" % (
                path, w(MODULEDATA_PCHEADER), self.addr))
        return w(MODULEDATA_TEXT)

    def functions(self):
        """{entry address: (name, end, file offset)}: a function ends where
        the next one starts; its file offset is that of its section."""
        out = {}
        ends = [e for _, e in self.funcs[1:]] + [self.end]
        for (name, entry), end in zip(self.funcs, ends):
            if entry in out:
                raise PclntabError("two functions at %#x: %s, %s" % (
                    entry, out[entry][0], name))
            out[entry] = (name, end, self.file_offset(entry))
        return out

    def file_offset(self, addr):
        for _name, (saddr, soff, size) in self.sections.items():
            if saddr and saddr <= addr < saddr + size:
                return addr - saddr + soff
        raise PclntabError("%#x is in no section" % addr)

    def by_entry(self):
        """{entry address: name}; entries are unique in a functab."""
        out = {}
        for name, entry in self.funcs:
            if entry in out:
                raise PclntabError("two functions at %#x: %s, %s" % (
                    entry, out[entry], name))
            out[entry] = name
        return out
