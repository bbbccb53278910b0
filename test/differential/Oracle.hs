-- | The oracle of the differential test of pkg/monocleconfig (differential_test.go there):
-- it answers, for each input, what the Haskell libraries Monocle 1.11.2 builds with make of
-- it, so the test can compare the operator's verdict with theirs. It calls only the
-- libraries (time, HsYAML-aeson, aeson, scientific), never Monocle's code: the one or two
-- lines of Monocle's that say how Monocle calls them are typed out again below, each with
-- the file it comes from.
--
-- Input on stdin, one line per input: <kind> TAB <the input's UTF-8 bytes in hex>.
-- Output on stdout, one line per input, in order: a verdict, first word the answer:
--
--   update_since  ok <the UTCTime, as show prints it> | refused
--   alias_date    ok <date> | too-old <date> | unparsable
--   yaml_scalar   null | bool true|false | number <coefficient>e<exponent>
--                 | string <hex of the UTF-8 bytes> | array | object | missing | error <message>
--   natural       ok <the natural> | ok none | refused | error <message>
--
-- A number is aeson's Scientific normalised (no trailing zero in the coefficient), so
-- 1000 is 1e3 and 0 is 0e0.
--
-- Built by `make test-differential` with Debian 12's GHC 9.0.2, whose time library is 1.9.3
-- where Monocle 1.11.2's build (GHC 9.6.2) has 1.12.2: the two read a year differently only
-- when it has a minus sign (1.12.2 accepts "-2021-01-01", 1.9.3 refuses it), so the test
-- keeps inputs that start with "-" out of the dates it compares.
module Main (main) where

import Control.Applicative ((<|>))
import qualified Data.Aeson as A
import qualified Data.Aeson.Key as Key
import qualified Data.Aeson.KeyMap as KeyMap
import qualified Data.ByteString as BS
import Data.Char (digitToInt, intToDigit, isHexDigit)
import Data.Scientific (Scientific, base10Exponent, coefficient, floatingOrInteger, normalize)
import qualified Data.Text as T
import qualified Data.Text.Encoding as TE
import qualified Data.Text.Encoding.Error as TE
import Data.Time (UTCTime (..), defaultTimeLocale, fromGregorian, parseTimeM)
import qualified Data.YAML.Aeson as YA
import System.IO (BufferMode (..), hSetBuffering, stdout)

main :: IO ()
main = do
  hSetBuffering stdout (BlockBuffering Nothing)
  mapM_ (putStrLn . answer) . lines =<< getContents

answer :: String -> String
answer line = case break (== '\t') line of
  (kind, '\t' : digits) | Just bytes <- unhex digits -> verdict kind bytes
  _ -> "error " ++ show ("bad input line: " ++ line)

verdict :: String -> BS.ByteString -> String
verdict "update_since" b = maybe "refused" (("ok " ++) . show) (updateSince (utf8 b))
verdict "alias_date" b = maybe "unparsable" oldest (aliasDate (utf8 b))
  where
    -- mkRangeValue in src/Monocle/Search/Query.hs (1.11.2): "when (date < oldestDate)
    -- (throwParseError $ "Date is too old: " <> show date)", oldestDate 1970-01-01 00:00:00 UTC.
    oldest d = (if d < UTCTime (fromGregorian 1970 1 1) 0 then "too-old " else "ok ") ++ show d
verdict "yaml_scalar" b = either yamlError scalar (yamlValue b)
verdict "natural" b = either yamlError natural (yamlValue b)
verdict kind _ = "error " ++ show ("unknown kind " ++ kind)

-- | parseDateValue in src/Monocle/Prelude.hs (1.11.2), the reader of a crawler's update_since.
updateSince :: String -> Maybe UTCTime
updateSince str = tryParse "%F" <|> tryParse "%F %T %Z" <|> tryParse "%FT%XZ"
  where
    tryParse fmt = parseTimeM False defaultTimeLocale fmt str

-- | parseDateValue in src/Monocle/Search/Query.hs (1.11.2), the reader of a search date
-- (tried after the relative dates "now...", which the test does not generate). mkRangeValue
-- then drops the sub-seconds, which these formats cannot give.
aliasDate :: String -> Maybe UTCTime
aliasDate txt = tryParse "%F" <|> tryParse "%Y-%m" <|> tryParse "%Y"
  where
    tryParse fmt = parseTimeM False defaultTimeLocale fmt txt

-- | The value of key v of the YAML document "v: <input>", decoded as dhall-yaml decodes
-- config.yaml: yamlToJson = Data.YAML.Aeson.decode1Strict (dhall-yaml's
-- src/Dhall/YamlToDhall.hs). Nothing when the document has no key v or is not a mapping.
yamlValue :: BS.ByteString -> Either String (Maybe A.Value)
yamlValue b = case YA.decode1Strict (BS.append (TE.encodeUtf8 (T.pack "v: ")) b) of
  Left (_, msg) -> Left msg
  Right (A.Object o) -> Right (KeyMap.lookup (Key.fromString "v") o)
  Right _ -> Right Nothing

yamlError :: String -> String
yamlError msg = "error " ++ show msg

scalar :: Maybe A.Value -> String
scalar Nothing = "missing"
scalar (Just v) = case v of
  A.Null -> "null"
  A.Bool x -> if x then "bool true" else "bool false"
  A.Number s -> "number " ++ sci s
  A.String t -> "string " ++ hex (TE.encodeUtf8 t)
  A.Array _ -> "array"
  A.Object _ -> "object"

sci :: Scientific -> String
sci s = let n = normalize s in show (coefficient n) ++ "e" ++ show (base10Exponent n)

-- | Whether dhall-json takes the value for an Optional Natural (loop_delay_sec): dhallFromJSON
-- in dhall-json's src/Dhall/JSONToDhall.hs turns a JSON number into a Natural when
-- "Right n <- floatingOrInteger x :: Either Double Integer, n >= 0", and null into None.
natural :: Maybe A.Value -> String
natural (Just (A.Number x)) = case floatingOrInteger x :: Either Double Integer of
  Right n | n >= 0 -> "ok " ++ show n
  _ -> "refused"
natural (Just A.Null) = "ok none"
natural _ = "refused"

utf8 :: BS.ByteString -> String
utf8 = T.unpack . TE.decodeUtf8With TE.lenientDecode

unhex :: String -> Maybe BS.ByteString
unhex s
  | even (length s) && all isHexDigit s = Just (BS.pack (pairs s))
  | otherwise = Nothing
  where
    pairs (a : b : rest) = fromIntegral (digitToInt a * 16 + digitToInt b) : pairs rest
    pairs _ = []

hex :: BS.ByteString -> String
hex = concatMap byte . BS.unpack
  where
    byte w = [intToDigit (fromIntegral w `div` 16), intToDigit (fromIntegral w `mod` 16)]
